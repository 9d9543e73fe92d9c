// Fetch request templates: the named requests an Xcode model keeps (`<fetchRequest>` at model
// level), as Core Data's `NSManagedObjectModel.fetchRequestFromTemplate(withName:substitutionVariables:)`
// hands them out. A template keeps its predicate with its `$VARIABLES`; asking for one substitutes
// the values given (the syntax tree's own substitution), and a variable left without a value is an
// error naming it, not a predicate that fails later on the first object.

import Foundation
import SiftEvaluation
import SiftSyntax

/// A named fetch request of a model, whose predicate may use `$VARIABLES`.
///
/// ```swift
/// for t in model.fetchRequestTemplates {
///     print(t.name, t.entityName, t.predicateFormat ?? "all", t.variableNames)   // byName Person name == $NAME ["NAME"]
/// }
/// ```
public struct FetchRequestTemplate: Sendable {
    /// The template's name.
    public let name: String
    /// The request as the model writes it, its predicate's variables not substituted.
    public let request: FetchRequest<ManagedObject>
    /// Where the template is in the model's `contents` file, or in the JSON model file it was read from.
    public let location: SourceLocation

    /// The entity the template fetches.
    public var entityName: String { request.entityName }
    /// The predicate as the model writes it (nil: every object).
    public var predicateFormat: String? { request.predicate?.source }
    /// The variables its predicate needs, sorted.
    public var variableNames: [String] {
        guard let syntax = request.predicate?.syntax else { return [] }
        return syntax.variableNames.subtracting(syntax.assignedVariableNames).sorted()
    }
}

extension ManagedObjectModel {
    /// The fetch request template called `name`, with `substitutionVariables` put in for its
    /// predicate's `$VARIABLES` (Swift values as a format argument takes them: numbers, strings,
    /// dates, arrays, managed objects). Its fetch limit, offset, batch size and flags come with it.
    /// An unknown template (kind `model`) and a variable without a value (kind
    /// `invalid-operation`) are errors naming what is missing.
    ///
    /// ```swift
    /// let request = try model.fetchRequestTemplate("olderThan", substitutionVariables: ["AGE": 30])
    /// let people = try context.fetch(request)
    /// ```
    public func fetchRequestTemplate(_ name: String, substitutionVariables: [String: Any] = [:]) throws(StoreError)
        -> FetchRequest<ManagedObject>
    {
        guard let template = fetchRequestTemplates.first(where: { $0.name == name }) else {
            let names = fetchRequestTemplates.map { "'\($0.name)'" }.joined(separator: ", ")
            throw StoreError(
                .model,
                "the model has no fetch request template '\(name)'"
                    + (names.isEmpty ? " (it has none)" : "; its templates: \(names)"))
        }
        var request = template.request
        guard let predicate = request.predicate else { return request }
        let missing = template.variableNames.filter { substitutionVariables[$0] == nil }
        guard missing.isEmpty else {
            throw StoreError(
                .invalidOperation,
                "fetch request template '\(name)' needs a value for "
                    + missing.map { "$\($0)" }.joined(separator: ", ") + " (predicate: \(predicate.source ?? ""))")
        }
        var literals: [String: LiteralValue] = [:]
        for (key, value) in substitutionVariables {
            do { literals[key] = try LiteralValue(any: value) } catch {
                throw StoreError(
                    .invalidOperation,
                    "fetch request template '\(name)': the value for $\(key) cannot be a predicate constant (\(error))")
            }
        }
        request.predicate = SiftPredicate(
            predicate.syntax.withSubstitutionVariables(literals), source: predicate.source, options: predicate.options)
        return request
    }
}

/// A template as the JSON model file writes it, in its top-level `"fetchRequests"` array: options
/// at their defaults are left out.
///
/// ```json
/// {"name": "byTitle", "entity": "Book", "predicate": "title == $TITLE", "fetchLimit": 10}
/// ```
struct FetchRequestTemplateEntry: Codable, Hashable {
    var name: String
    var entity: String
    var predicate: String?
    var fetchLimit: Int?
    var fetchOffset: Int?
    var fetchBatchSize: Int?
    var includesSubentities: Bool?
    var includesPendingChanges: Bool?
    var returnsDistinctResults: Bool?

    /// The keys of a template in a model file.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, entity, predicate, fetchLimit, fetchOffset, fetchBatchSize, includesSubentities
        case includesPendingChanges, returnsDistinctResults
    }

    /// The entry of `template`, its defaults left out.
    init(_ template: FetchRequestTemplate) {
        let r = template.request
        name = template.name
        entity = r.entityName
        predicate = template.predicateFormat
        fetchLimit = r.fetchLimit
        fetchOffset = r.fetchOffset == 0 ? nil : r.fetchOffset
        fetchBatchSize = r.fetchBatchSize == 0 ? nil : r.fetchBatchSize
        includesSubentities = r.includesSubentities ? nil : false
        includesPendingChanges = r.includesPendingChanges ? nil : false
        returnsDistinctResults = r.returnsDistinctResults ? true : nil
    }

    /// The template this entry writes, placed at `location`, or the problems with it, each with
    /// the key it is about: an entity not in `entityNames`, a predicate that does not parse, a
    /// negative number or a limit of 0.
    func template(entityNames: Set<String>, at location: SourceLocation) -> (
        FetchRequestTemplate?, [(key: String, message: String)]
    ) {
        var problems: [(key: String, message: String)] = []
        if !entityNames.contains(entity) { problems.append(("entity", "the model has no entity '\(entity)'")) }
        var request = FetchRequest(entity)
        if let predicate {
            do { request.predicate = SiftPredicate(try PredicateSyntax.parse(predicate), source: predicate) } catch {
                problems.append(("predicate", "the predicate does not parse: \(error.location): \(error.message)"))
            }
        }
        for (key, n, least) in [
            ("fetchLimit", fetchLimit, 1), ("fetchOffset", fetchOffset, 0), ("fetchBatchSize", fetchBatchSize, 0),
        ] {
            if let n, n < least { problems.append((key, "\(key) must be at least \(least), not \(n)")) }
        }
        guard problems.isEmpty else { return (nil, problems) }
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset ?? 0
        request.fetchBatchSize = fetchBatchSize ?? 0
        request.includesSubentities = includesSubentities ?? true
        request.includesPendingChanges = includesPendingChanges ?? true
        request.returnsDistinctResults = returnsDistinctResults ?? false
        return (FetchRequestTemplate(name: name, request: request, location: location), [])
    }
}
