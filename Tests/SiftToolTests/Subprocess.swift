// Runs the built `sift` executable as a subprocess for the command-line tests: finds it beside the
// test bundle, and feeds standard input while draining stdout and stderr concurrently, so that
// neither a large input nor a large output can block the child.

import Foundation
import SiftTestSupport
import Testing

struct SiftOutput {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `sift args…` with `stdin` on standard input (drained concurrently so large outputs cannot
/// block), in this process's environment or `environment`; `executable` runs another program.
func runSift(
    _ args: [String], stdin: String = "", environment: [String: String]? = nil, executable: URL? = nil
) throws -> SiftOutput {
    let exe = try executable ?? #require(builtExecutable(named: "sift"), "no sift executable next to the test bundle")
    let process = Process()
    process.executableURL = exe
    process.arguments = args
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    let errBox = DataBox()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    // Standard input is written on a thread of its own too: a child that answers line by line
    // fills the output pipe before it has read a large input, and would wait for this thread
    // while this thread waits for it.
    let writer = input.fileHandleForWriting
    _ = ignoreBrokenPipes
    group.enter()
    DispatchQueue.global().async {
        // A child that exits without reading all of its input (a usage error, a predicate given
        // as an argument) closes the pipe first: the write then fails and the rest is dropped.
        try? writer.write(contentsOf: Data(stdin.utf8))
        try? writer.close()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return SiftOutput(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errBox.data, as: UTF8.self))
}

/// Writing to a pipe whose reader has exited raises SIGPIPE, which would end the test process:
/// ignored once, so that the write fails with EPIPE instead.
private let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

private final class DataBox: @unchecked Sendable { var data = Data() }
