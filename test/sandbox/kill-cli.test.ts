/**
 * `fsm-bulk sandbox --data FILE` killed with SIGKILL keeps every write it answered: the built CLI takes creates,
 * is killed right after the last answer, and a sandbox started again on FILE holds them all. A crash while a
 * snapshot was being taken (the log set aside, the new FILE not yet in place) loses nothing either.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { temporaryDir } from "../support.js"
import { call, login } from "./harness.js"

const tempDir = temporaryDir("fsm-sandbox-kill-")
const bin = join(import.meta.dirname, "../../dist/bin.js")

describe("sandbox: --data under kill -9", () => {
  it.scopedLive("every create answered before the kill is there after a restart", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "state.json")
      const child = spawn(process.execPath, [
        bin,
        "sandbox",
        "--port",
        "0",
        "--rate-limit",
        "100000/1s",
        "--data",
        file
      ], { stdio: ["ignore", "pipe", "pipe"] })
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      yield* Effect.addFinalizer(() => Effect.promise(() => (child.kill("SIGKILL"), exited)))
      const url = yield* Effect.promise(() =>
        new Promise<string>((resolve) =>
          createInterface({ input: child.stdout! }).once("line", (l) => resolve(l.replace(/^listening on /, "")))
        )
      )
      const sandbox = { url } as Parameters<typeof call>[0]
      const api = call(sandbox, yield* login(sandbox))
      const answered: Array<string> = []
      for (let i = 1; i <= 40; i++) {
        const created = yield* api("POST", "/customers", { body: { externalId: `C${i}`, name: `Cliente ${i}` } })
        assert.strictEqual(created.status, 201)
        answered.push(`C${i}`)
      }
      // Killed at once: the last answers came well within the snapshot's 200 ms debounce.
      child.kill("SIGKILL")
      yield* Effect.promise(() => exited)

      const again = yield* startSandbox({ port: 0, dataFile: file })
      const kept = (yield* again.control.records("sandbox-key", "customers")).map((c) => c["externalId"])
      assert.deepStrictEqual(kept, answered)
      // The ids go on after the last one answered.
      const next = yield* call(again, yield* login(again))("POST", "/customers", {
        body: { externalId: "C41", name: "Mais um" }
      })
      assert.strictEqual(next.body.result.id, 41)
    }))

  it.scopedLive("a crash between setting the log aside and renaming the new snapshot loses nothing", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "state.json")
      const customer = (id: number, externalId: string) => ({ id, externalId, name: externalId })
      const snapshot = {
        version: 1,
        accounts: {
          "sandbox-key": { nextIds: { customers: 2 }, tables: { customers: [customer(1, "C1")] }, pendingAnswers: [] }
        }
      }
      writeFileSync(file, JSON.stringify(snapshot))
      const line = (o: object) => `${JSON.stringify({ a: "sandbox-key", ...o })}\n`
      // Set aside: C2 created. Written after: C1 removed, C3 created, and a last line cut by the crash.
      writeFileSync(
        `${file}.log.prev`,
        line({ t: "customers", k: "2", r: customer(2, "C2") }) + line({ n: { customers: 3 }, p: [] })
      )
      writeFileSync(
        `${file}.log`,
        line({ t: "customers", k: "1", r: null }) + line({ t: "customers", k: "3", r: customer(3, "C3") }) +
          line({ n: { customers: 4 }, p: [] }) + "{\"a\":\"sandbox-k"
      )
      const sandbox = yield* startSandbox({ port: 0, dataFile: file })
      assert.deepStrictEqual((yield* sandbox.control.records("sandbox-key", "customers")).map((c) => c["externalId"]), [
        "C2",
        "C3"
      ])
      // The start took a snapshot holding them: the set-aside log is gone.
      assert.isFalse(existsSync(`${file}.log.prev`))
      const created = yield* call(sandbox, yield* login(sandbox))("POST", "/customers", {
        body: { externalId: "C4", name: "C4" }
      })
      assert.strictEqual(created.body.result.id, 4)
    }))
})
