/**
 * Both tiers' files share their worker processes (`--no-isolate`), kept apart by test/setup/file-leaks.ts: what a
 * file leaves running (a child process, a server, a ref'd timer, a signal listener) is found after it, and what it
 * changes (environment, working directory, exit code) is put back. Each kind is made here and must be named.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { guardFile, guarding, leftBehind, processState, putBack, removeAddedListeners } from "../setup/leaks.js"

/** A closed handle leaves libuv's list a turn of the loop after its callback: what is left once it had its turns. */
const leftOnceClosed = async (before: ReturnType<typeof processState>) => {
  for (let turn = 0; turn < 100 && leftBehind(before).length > 0; turn++) {
    await new Promise((resolve) => setImmediate(resolve))
  }
  return leftBehind(before)
}

describe("what a file leaves in its process", () => {
  it("nothing, when it leaves nothing", () => {
    const before = processState()
    assert.deepStrictEqual(leftBehind(before), [])
  })

  it("a child process still running, until it ends", async () => {
    const before = processState()
    const child = spawn("sleep", ["30"], { stdio: "ignore" })
    await once(child, "spawn")
    try {
      const left = leftBehind(before).join("; ")
      assert.include(left, `child processes still running: ${child.pid}`)
      assert.include(left, "1 more active ProcessWrap")
      // the run's shared PostgreSQL cluster is the one child allowed to stay
      assert.notInclude(leftBehind(before, new Set([child.pid!])).join("; "), "child processes")
    } finally {
      child.kill("SIGKILL")
      await once(child, "exit")
    }
    assert.deepStrictEqual(await leftOnceClosed(before), [])
  })

  it("a server listening, until it is closed", async () => {
    const before = processState()
    const server = createServer().listen(0, "127.0.0.1")
    await once(server, "listening")
    try {
      assert.include(leftBehind(before).join("; "), "1 more active TCPServerWrap")
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
    assert.deepStrictEqual(await leftOnceClosed(before), [])
  })

  it("a timer left running (not an unref'd one)", () => {
    const before = processState()
    const timer = setInterval(() => undefined, 60_000)
    const quiet = setInterval(() => undefined, 60_000).unref()
    try {
      const left = leftBehind(before)
      assert.strictEqual(left.length, 1, left.join("\n"))
      // Where it was made: this file's line, to fix.
      assert.match(left[0]!, /^1 timer\(s\) still pending, made at .*leaks\.test\.ts:\d+/)
    } finally {
      clearInterval(timer)
      clearInterval(quiet)
    }
    assert.deepStrictEqual(leftBehind(before), [], "a cleared timer is not left")
  })

  it("a timer left while another, older one ends: found by identity, where a count of timers saw nothing", async () => {
    // An older timer, pending when the file starts (vitest's own, in a real run), that ends while the file runs.
    const older = setTimeout(() => undefined, 10)
    const before = processState()
    const left = setTimeout(() => undefined, 60_000)
    try {
      await new Promise((resolve) => setTimeout(resolve, 50)) // the older one fires meanwhile: one ended, one begun
      const found = leftBehind(before)
      assert.strictEqual(found.length, 1, found.join("\n"))
      assert.match(found[0]!, /^1 timer\(s\) still pending, made at .*leaks\.test\.ts:\d+/)
    } finally {
      clearTimeout(older)
      clearTimeout(left)
    }
  })

  it("a signal listener added, taken off again", () => {
    const before = processState()
    const listener = () => undefined
    process.on("SIGTERM", listener)
    try {
      assert.deepStrictEqual(leftBehind(before), ["1 process listener(s) for SIGTERM added"])
      removeAddedListeners(before)
      assert.notInclude(process.listeners("SIGTERM"), listener)
      assert.deepStrictEqual(leftBehind(before), [])
    } finally {
      process.removeListener("SIGTERM", listener)
    }
  })

  it("puts back the environment, working directory and exit code", () => {
    const before = processState()
    const cwd = process.cwd()
    const home = process.env["HOME"]
    process.env["FSM_LEAK_PROBE"] = "1"
    delete process.env["HOME"]
    process.chdir(tmpdir())
    process.exitCode = 3
    try {
      const changed = putBack(before)
      assert.includeMembers(changed, ["env FSM_LEAK_PROBE set", "env HOME changed", "exitCode set to 3"])
      assert.strictEqual(process.env["FSM_LEAK_PROBE"], undefined)
      assert.strictEqual(process.env["HOME"], home)
      assert.strictEqual(process.cwd(), cwd)
      assert.strictEqual(process.exitCode, before.exitCode)
      assert.deepStrictEqual(putBack(before), [])
    } finally {
      delete process.env["FSM_LEAK_PROBE"]
      if (home !== undefined) process.env["HOME"] = home
      process.chdir(cwd)
      process.exitCode = before.exitCode
    }
  })
})

/** What test/setup/file-leaks.ts runs after each file of either tier: the file fails, naming what it left. */
describe("the guard after a file", () => {
  const none = () => new Set<number>()

  // This file is fast tier: before 2026-11-29 only the cli tier's files had the guard, and a fast-tier file's leftover
  // reached whichever file ran next in its worker.
  it("runs around this file, as around every file of both tiers", () => {
    assert.isTrue(guarding.file)
  })

  it("passes a file that left nothing", async () => {
    await guardFile(processState(), none, 0)
  })

  it("fails a file that left a child process, and ends that child", async () => {
    const before = processState()
    const child = spawn("sleep", ["30"], { stdio: "ignore" })
    await once(child, "spawn")
    const exited = once(child, "exit")
    const failure = await guardFile(before, none, 200).then(() => undefined, (e: Error) => e.message)
    assert.include(failure, `child processes still running: ${child.pid}`)
    const [code, signal] = await exited
    assert.deepStrictEqual([code, signal], [null, "SIGKILL"])
    assert.deepStrictEqual(await leftOnceClosed(before), [])
  })

  it("lets the run's shared PostgreSQL cluster outlive the file that started it", async () => {
    const before = processState()
    const child = spawn("sleep", ["30"], { stdio: "ignore" })
    await once(child, "spawn")
    try {
      const failure = await guardFile(before, () => new Set([child.pid!]), 200).then(() => "", (e: Error) => e.message)
      assert.notInclude(failure, "child processes")
      assert.isNull(child.exitCode)
    } finally {
      child.kill("SIGKILL")
      await once(child, "exit")
    }
  })

  it("fails a file that left a server listening", async () => {
    const before = processState()
    const server = createServer().listen(0, "127.0.0.1")
    await once(server, "listening")
    try {
      const failure = await guardFile(before, none, 200).then(() => undefined, (e: Error) => e.message)
      assert.include(failure, "1 more active TCPServerWrap than before the file")
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("fails a file that left a ref'd timer, and takes off the signal listeners it added", async () => {
    const before = processState()
    const timer = setTimeout(() => undefined, 60_000)
    const listener = () => undefined
    process.on("SIGINT", listener)
    try {
      const failure = await guardFile(before, none, 0).then(() => undefined, (e: Error) => e.message)
      assert.match(failure ?? "", /1 timer\(s\) still pending, made at .*leaks\.test\.ts:\d+/, failure)
      assert.include(failure, "1 process listener(s) for SIGINT added")
      assert.notInclude(process.listeners("SIGINT"), listener)
    } finally {
      clearTimeout(timer)
      process.removeListener("SIGINT", listener)
    }
  })
})
