// Managed objects as `%@` arguments (`manager == %@`, `%@ IN employees`, `SELF == %@`): an object
// becomes a reference to its ID (URI and row key), compared by identity in memory and as the
// foreign key or primary key in SQL. An unsaved object has no row, so its reference matches only
// the pending objects that point at it, which memory judges.

import SiftEvaluation
import SiftSyntax

extension ManagedObject: PredicateArgumentConvertible {
    /// The object's identity as a predicate constant: its ID's URI and, once saved, its row's key.
    /// Objects of other contexts with the same ID are the same object, as in Core Data.
    ///
    /// ```swift
    /// let request = try FetchRequest(Employee.self, predicate: "manager == %@", ann)
    /// // request.predicate.description: manager == <sift://…/Manager/p1>
    /// ```
    public var predicateArgument: LiteralValue {
        .object(ObjectReference(uri: objectID.uriRepresentation.absoluteString, primaryKey: objectID.primaryKey))
    }
}
