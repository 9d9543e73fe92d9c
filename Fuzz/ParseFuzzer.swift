// libFuzzer entry point: parses arbitrary bytes and checks the canonical-form round trip
// (parse(print(t)) must succeed, equal t, and print back to the same text). Built by scripts/fuzz.sh.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let tree: PredicateSyntax
    do {
        tree = try PredicateSyntax.parse(text)
    } catch {
        _ = error.description  // rendering a diagnostic must not crash either
        return 0
    }
    let printed = tree.description
    let reparsed: PredicateSyntax
    do {
        reparsed = try PredicateSyntax.parse(printed)
    } catch {
        fatalError(
            "canonical form does not reparse\ninput:   \(text.debugDescription)\nprinted: \(printed.debugDescription)\nerror:   \(error)"
        )
    }
    if reparsed != tree {
        fatalError(
            "reparsed tree differs\ninput:   \(text.debugDescription)\nprinted: \(printed.debugDescription)\nreprint: \(reparsed.description.debugDescription)"
        )
    }
    let reprinted = reparsed.description
    if reprinted != printed {
        fatalError(
            "printing is not stable\ninput:   \(text.debugDescription)\nprinted: \(printed.debugDescription)\nreprint: \(reprinted.debugDescription)"
        )
    }
    return 0
}
