// Runs the built `sift` executable as a subprocess for the command-line tests: finds it beside the
// test bundle, feeds standard input, and drains stdout and stderr concurrently so a large output
// cannot block the child.

import Foundation
import Testing
import SiftTestSupport

struct SiftOutput { var status: Int32; var stdout: String; var stderr: String }

/// Runs `sift args…` with `stdin` on standard input (drained concurrently so large outputs cannot block).
func runSift(_ args: [String], stdin: String = "") throws -> SiftOutput {
    let exe = try #require(builtExecutable(named: "sift"), "no sift executable next to the test bundle")
    let process = Process()
    process.executableURL = exe
    process.arguments = args
    let out = Pipe(), err = Pipe(), input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    let errBox = DataBox()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return SiftOutput(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                  stderr: String(decoding: errBox.data, as: UTF8.self))
}

private final class DataBox: @unchecked Sendable { var data = Data() }

