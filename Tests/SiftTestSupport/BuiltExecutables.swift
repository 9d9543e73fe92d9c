// Finds an executable product of this package (`sift`, `sift-crash-child`) that SwiftPM built next
// to the test bundle, so the tests that run subprocesses share one way of locating them.

import Foundation

/// The executable `name` built beside the running test bundle, found by walking up from the test
/// binary a few directories; nil when there is none.
public func builtExecutable(named name: String) -> URL? {
    let fm = FileManager.default
    var starts = [URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath(), Bundle.main.bundleURL]
    if let exe = Bundle.main.executableURL { starts.append(exe) }
    for start in starts {
        var dir = start.deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = dir.appendingPathComponent(name)
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: candidate.path, isDirectory: &isDir), !isDir.boolValue,
                fm.isExecutableFile(atPath: candidate.path)
            {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
    }
    return nil
}
