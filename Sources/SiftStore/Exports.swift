// SiftStore's API speaks in the evaluator's types (`SiftPredicate` in fetch requests,
// `SiftSortDescriptor` for sorting, `Value` for attribute values), so importing the store brings
// them along: a program that only stores and fetches needs one import.

@_exported import SiftEvaluation
