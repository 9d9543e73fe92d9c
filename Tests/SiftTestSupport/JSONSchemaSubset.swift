// A validator for the part of JSON Schema (draft 2020-12) that the repository's own schemas use, so
// the tests can check files against a published schema without a package for it (none on the
// machine's list): `type` (one or several), `properties`, `required`, `additionalProperties: false`,
// `items`, `enum`, `minimum`, `oneOf`, and `$ref` to `#/$defs/…`. A keyword outside the subset is
// reported as an error, so a schema cannot silently rely on one this validator skips.

import SiftJSON

/// Validates JSON values against a schema written in the supported subset of JSON Schema.
///
/// ```swift
/// let schema = try JSONSchemaSubset(JSONReader.parse(#"{"type": "object", "required": ["a"]}"#))
/// schema.errors(in: try JSONReader.parse("{}"))   // ["(root): missing required key 'a'"]
/// ```
public struct JSONSchemaSubset {
    /// The schema document.
    public let root: JSONValue
    /// The keywords this validator understands (annotations included).
    public static let keywords: Set<String> = [
        "$schema", "$id", "$defs", "title", "description", "type", "properties", "required",
        "additionalProperties", "items", "enum", "minimum", "oneOf", "$ref",
    ]

    /// A validator for `root`.
    public init(_ root: JSONValue) { self.root = root }

    /// Every way `value` breaks the schema, each after its key path (`(root)` for the whole).
    public func errors(in value: JSONValue) -> [String] {
        var out: [String] = []
        check(value, root, path: "", into: &out)
        return out
    }

    /// The schema `$ref` names (`#/$defs/name`).
    public func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/$defs/") else { return nil }
        return member(member(root, "$defs"), String(ref.dropFirst("#/$defs/".count)))
    }

    /// Member `key` of `object`, if it is an object that has one.
    public func member(_ object: JSONValue?, _ key: String) -> JSONValue? {
        guard case .object(let members)? = object else { return nil }
        return members.first { $0.0 == key }?.1
    }

    private func check(_ value: JSONValue, _ schema: JSONValue, path: String, into out: inout [String]) {
        let here = path.isEmpty ? "(root)" : path
        guard case .object(let keywords) = schema else { return out.append("\(here): the schema is not an object") }
        for (k, _) in keywords where !Self.keywords.contains(k) { out.append("\(here): unsupported keyword '\(k)'") }
        if case .string(let ref)? = member(schema, "$ref") {
            guard let target = resolve(ref) else { return out.append("\(here): unresolved $ref '\(ref)'") }
            check(value, target, path: path, into: &out)
        }
        if let types = member(schema, "type"), !Self.matches(value, types) {
            out.append("\(here): \(value.text) is not of type \(types.text)")
        }
        if case .array(let allowed)? = member(schema, "enum"), !allowed.contains(value) {
            out.append("\(here): \(value.text) is not one of \(JSONValue.array(allowed).text)")
        }
        if let minimum = Self.number(member(schema, "minimum")), let x = Self.number(value), x < minimum {
            out.append("\(here): \(value.text) is below the minimum \(minimum)")
        }
        if case .array(let choices)? = member(schema, "oneOf") {
            let passing = choices.filter { errorsFor(value, $0, path: path).isEmpty }.count
            if passing != 1 { out.append("\(here): \(value.text) matches \(passing) of the oneOf schemas, not 1") }
        }
        if case .array(let items) = value, let itemSchema = member(schema, "items") {
            for (i, item) in items.enumerated() { check(item, itemSchema, path: "\(path)[\(i)]", into: &out) }
        }
        if case .object(let members) = value { checkObject(members, schema, path: path, into: &out) }
    }

    private func errorsFor(_ value: JSONValue, _ schema: JSONValue, path: String) -> [String] {
        var out: [String] = []
        check(value, schema, path: path, into: &out)
        return out
    }

    private func checkObject(
        _ members: [(String, JSONValue)], _ schema: JSONValue, path: String, into out: inout [String]
    ) {
        let here = path.isEmpty ? "(root)" : path
        let properties = member(schema, "properties")
        if case .array(let required)? = member(schema, "required") {
            for case .string(let key) in required where !members.contains(where: { $0.0 == key }) {
                out.append("\(here): missing required key '\(key)'")
            }
        }
        for (key, v) in members {
            let at = path.isEmpty ? key : path + "." + key
            if let propertySchema = member(properties, key) {
                check(v, propertySchema, path: at, into: &out)
            } else if member(schema, "additionalProperties") == .bool(false) {
                out.append("\(at): key not allowed by the schema")
            }
        }
    }

    private static func number(_ v: JSONValue?) -> Double? {
        switch v {
        case .integer(let i)?: Double(i)
        case .double(let d)?: d
        default: nil
        }
    }

    private static func matches(_ value: JSONValue, _ types: JSONValue) -> Bool {
        switch types {
        case .string(let t): return matches(value, t)
        case .array(let ts): return ts.contains { if case .string(let t) = $0 { matches(value, t) } else { false } }
        default: return false
        }
    }

    private static func matches(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null),
            ("integer", .integer), ("number", .integer), ("number", .double):
            true
        case ("integer", .double(let d)): d.rounded() == d
        default: false
        }
    }
}
