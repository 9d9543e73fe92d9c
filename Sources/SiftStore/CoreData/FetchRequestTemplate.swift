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
    /// Where the template is in the model's `contents` file.
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
