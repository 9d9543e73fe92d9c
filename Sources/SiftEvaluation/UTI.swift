// Uniform Type Identifier conformance for UTI-CONFORMS-TO. Linux has no UTType database, so Sift
// ships a small table of the common system types and lets applications add their own; a type
// conforms to itself, to everything it declares, transitively, and every type conforms to
// `public.item`.

/// The conformance table `UTI-CONFORMS-TO` consults.
///
/// ```swift
/// var utis = UTITable.standard
/// utis.declare("com.example.note", conformsTo: ["public.plain-text"])
/// utis.conforms("com.example.note", to: "public.text")   // true
/// ```
public struct UTITable: Sendable, Hashable {
    private var parents: [String: [String]]

    /// A table declaring each type's parents (`UTITable.standard` holds the common `public.*` types).
    public init(_ parents: [String: [String]] = [:]) { self.parents = parents }

    /// Common public types and their declared parents.
    public static let standard = UTITable([
        "public.content": ["public.item"],
        "public.data": ["public.item"],
        "public.text": ["public.data", "public.content"],
        "public.plain-text": ["public.text"],
        "public.utf8-plain-text": ["public.plain-text"],
        "public.html": ["public.text"],
        "public.xml": ["public.text"],
        "public.json": ["public.text"],
        "public.source-code": ["public.plain-text"],
        "public.image": ["public.data", "public.content"],
        "public.jpeg": ["public.image"],
        "public.png": ["public.image"],
        "public.tiff": ["public.image"],
        "com.compuserve.gif": ["public.image"],
        "public.heic": ["public.image"],
        "public.svg-image": ["public.image", "public.xml"],
        "public.audiovisual-content": ["public.data", "public.content"],
        "public.movie": ["public.audiovisual-content"],
        "public.video": ["public.movie"],
        "public.mpeg-4": ["public.movie"],
        "com.apple.quicktime-movie": ["public.movie"],
        "public.audio": ["public.audiovisual-content"],
        "public.mp3": ["public.audio"],
        "com.adobe.pdf": ["public.data", "public.composite-content"],
        "public.composite-content": ["public.content"],
        "public.archive": ["public.data"],
        "public.zip-archive": ["public.archive"],
        "public.url": ["public.data"],
        "public.file-url": ["public.url"],
        "public.folder": ["public.directory"],
        "public.directory": ["public.item"],
    ])

    /// Adds or replaces a type's declared parents.
    public mutating func declare(_ type: String, conformsTo parentTypes: [String]) {
        parents[type] = parentTypes
    }

    /// Whether `type` conforms to `other`.
    public func conforms(_ type: String, to other: String) -> Bool {
        if type == other || other == "public.item" { return true }
        var seen: Set<String> = [type]
        var stack = [type]
        while let t = stack.popLast() {
            for p in parents[t] ?? [] where seen.insert(p).inserted {
                if p == other { return true }
                stack.append(p)
            }
        }
        return false
    }
}
