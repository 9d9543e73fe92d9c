// StackGuard on its own: where a thread has room and where it has not, the move of a body to a
// large-stack worker with its result or typed error, and the workers' reuse (a move used to start
// a thread of its own, so many moves piled up threads; under libFuzzer thousands of them ran the
// process out of memory). The deep walks that rely on it are DeepNestingTests'.

import Foundation
import SiftSyntax
import SiftTestSupport
import Testing

@Suite struct StackGuardTests {
    /// A failure carried from the worker back to the caller with its type.
    struct Refused: Error, Equatable { let code: Int }

    @Test func aLargeStackHasRoomAndASmallOneHasNot() throws {
        let roomy = try onSmallStack(stackSize: 8 << 20) { StackGuard.hasRoom(below: StackGuard.lowWater) }
        #expect(roomy)
        // Smaller than the red zone: no frame on it is above the low-water mark.
        let cramped = try onSmallStack(stackSize: StackGuard.redZone / 2) {
            StackGuard.hasRoom(below: StackGuard.lowWater)
        }
        #expect(!cramped)
    }

    @Test func ensureMovesOnlyWhenTheStackIsLow() throws {
        func threadAndResult() -> (here: pthread_t, ran: pthread_t, value: Int) {
            let here = pthread_self()
            let (ran, value) = StackGuard.ensure { (pthread_self(), 6 * 7) }
            return (here, ran, value)
        }
        let roomy = try onSmallStack(stackSize: 8 << 20, threadAndResult)
        #expect(pthread_equal(roomy.here, roomy.ran) != 0)
        #expect(roomy.value == 42)
        let cramped = try onSmallStack(stackSize: StackGuard.redZone / 2, threadAndResult)
        #expect(pthread_equal(cramped.here, cramped.ran) == 0)
        #expect(cramped.value == 42)
    }

    @Test func aTypedErrorCrossesTheMove() {
        #expect(throws: Refused(code: 7)) {
            try StackGuard.onLargeStack { () throws(Refused) -> Int in throw Refused(code: 7) }
        }
    }

    @Test func theBodyMayUseTheCallersMemory() {
        var total = 0
        for i in 1...100 { StackGuard.onLargeStack { total += i } }
        #expect(total == 5050)
    }

    /// A thousand moves one after another reuse the same few workers. Other suites may start
    /// workers meanwhile (they run in parallel), hence a bound rather than an exact count; one
    /// thread per move would start a thousand.
    @Test func movesReuseWorkers() {
        let before = StackGuard.workersStarted
        var sum = 0
        for i in 0..<1000 { sum += StackGuard.onLargeStack { i } }
        #expect(sum == 499_500)
        #expect(StackGuard.workersStarted - before <= 4 * StackGuard.idleWorkers)
    }

    @Test func aWorkerRunningLowMovesToAnotherWorker() throws {
        // Nested moves: each body moves again, so each needs a worker other than its caller's.
        func nest(_ levels: Int) -> [pthread_t] {
            guard levels > 0 else { return [] }
            return StackGuard.onLargeStack { [pthread_self()] + nest(levels - 1) }
        }
        let threads = nest(6)
        #expect(threads.count == 6)
        for (i, a) in threads.enumerated() {
            for b in threads[(i + 1)...] { #expect(pthread_equal(a, b) == 0) }
        }
    }
}
