/**
 * The retries of a running job's store operations (src/fleet/Transient.ts, `jobStoreDeadline`) on Effect's clock,
 * driven by `TestClock`: an operation of a job lasts, its tries and pauses together, at most the window (a lease)
 * from its start and ends by the job's deadline (its lease's lapse less a margin), each try given only what is left;
 * outside a job the window counts from the first failure, as before. The real stores' faults under a worker are
 * test/fleet/claimed-read-cli.test.ts's (the hand-back within the lease, both backends) and transient-cli's.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { FleetError } from "../../src/fleet/Errors.js"
import { jobStoreDeadline, outlastingFaults } from "../../src/fleet/Transient.js"

const windowMs = 3_000

/** An operation that counts its tries and when each began, then does `each`. */
const counted = <A>(each: Effect.Effect<A, FleetError>) => {
  const starts: Array<number> = []
  const op = Effect.flatMap(
    Effect.clockWith((clock) => clock.currentTimeMillis),
    (now) => Effect.zipRight(Effect.sync(() => starts.push(now)), each)
  )
  return { starts, op }
}

const unavailable = new FleetError({ reason: "Unavailable", message: "the fleet store cannot be used: reset" })

/** `op` outlasting faults on a job's fiber whose deadline is `at` (ms on the test clock), heard failures counted. */
const inJob = <A>(op: Effect.Effect<A, FleetError>, at: () => number, firstTryMs = 1_000) => {
  const heard = { n: 0 }
  const run = outlastingFaults(windowMs, () => Effect.sync(() => void heard.n++))(op).pipe(
    Effect.locally(jobStoreDeadline, Option.some({ at, firstTryMs }))
  )
  return { heard, run }
}

describe("a running job's store operations end within its lease (issue 29)", () => {
  it.effect("a try without an answer is given up at the deadline, and not tried again", () =>
    Effect.gen(function*() {
      const { op, starts } = counted(Effect.never)
      const fiber = yield* Effect.fork(inJob(op, () => 2_000).run)
      yield* TestClock.adjust("1999 millis")
      assert.isNull(fiber.unsafePoll(), "still waiting before the deadline")
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.await(fiber)
      const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      assert.strictEqual(error?.reason, "Unavailable", "failed at the deadline as a store without an answer")
      assert.include(error?.message ?? "", "the fleet store gave no answer within 2000 ms")
      assert.deepStrictEqual(starts, [0], "one try: no time was left for another")
    }))

  it.effect("failures are tried again, backing off, while the next try would start before the deadline", () =>
    Effect.gen(function*() {
      const { op, starts } = counted(Effect.fail(unavailable))
      const job = inJob(op, () => 2_000)
      const fiber = yield* Effect.fork(job.run)
      yield* TestClock.adjust("1500 millis")
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      // Pauses of 100, 200, 400, 800 ms; the next (1,600 ms) would have ended past the deadline.
      assert.deepStrictEqual(starts, [0, 100, 300, 700, 1_500])
      assert.strictEqual(job.heard.n, 5, "each failure heard")
    }))

  it.effect("the window counts from the operation's start, however far the lease's lapse", () =>
    Effect.gen(function*() {
      const { op, starts } = counted(Effect.never)
      const fiber = yield* Effect.fork(inJob(op, () => 60_000).run)
      yield* TestClock.adjust("2999 millis")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("1 millis")
      assert.isTrue(Exit.isFailure(yield* Fiber.await(fiber)), "given up a window after its start")
      assert.deepStrictEqual(starts, [0])
    }))

  it.effect("past the deadline (a worker woken late), the first try is still made, given its least time", () =>
    Effect.gen(function*() {
      const { op, starts } = counted(Effect.as(Effect.sleep("800 millis"), "held"))
      const fiber = yield* Effect.fork(inJob(op, () => -5_000, 1_000).run)
      yield* TestClock.adjust("800 millis")
      assert.deepStrictEqual(yield* Fiber.join(fiber), "held", "the store's answer, not a timeout")
      assert.deepStrictEqual(starts, [0])
    }))

  it.effect("a refusal is not tried again", () =>
    Effect.gen(function*() {
      const refused = new FleetError({ reason: "Refused", message: "the fleet store refused an operation" })
      const { op, starts } = counted(Effect.fail(refused))
      const exit = yield* Effect.exit(inJob(op, () => 2_000).run)
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(starts, [0])
    }))

  it.effect("outside a job the window counts from the first failure and a try waits for the store's own answer", () =>
    Effect.gen(function*() {
      const { op, starts } = counted(Effect.never)
      const fiber = yield* Effect.fork(outlastingFaults(windowMs, () => Effect.void)(op))
      yield* TestClock.adjust("60 seconds")
      assert.isNull(fiber.unsafePoll(), "no time given to a try outside a job")
      assert.deepStrictEqual(starts, [0])
      yield* Fiber.interrupt(fiber)
    }))
})
