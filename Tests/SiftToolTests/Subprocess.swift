// Runs the built `sift` executable as a subprocess for the command-line tests: finds it beside the
// test bundle, feeds standard input, and drains stdout and stderr concurrently so a large output
// cannot block the child.

import Foundation
import Testing

/// The `sift` executable built beside this test bundle, found by walking up from the test binary.
private func siftBinary() -> URL? {
    let fm = FileManager.default
    var starts = [URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(), Bundle.main.bundleURL]
    if let exe = Bundle.main.executableURL { starts.append(exe) }
    for start in starts {
        var dir = start.deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent("sift")
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue, fm.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
    }
    return nil
}

struct SiftOutput { var status: Int32; var stdout: String; var stderr: String }

/// Runs `sift args…` with `stdin` on standard input (drained concurrently so large outputs cannot block).
func runSift(_ args: [String], stdin: String = "") throws -> SiftOutput {
    let exe = try #require(siftBinary(), "no sift executable next to the test bundle")
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

