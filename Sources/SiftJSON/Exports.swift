// SiftJSON's API speaks in the evaluator's types (`SiftPredicate` for the record filter,
// `SiftSortDescriptor` for sorting, `Value` for what a record reads as), so importing SiftJSON
// brings them along: a program that only filters records needs one import.

@_exported import SiftEvaluation
