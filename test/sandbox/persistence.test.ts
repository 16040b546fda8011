import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { temporaryDir } from "../support.js"
import { call, login } from "./harness.js"

const tempDir = temporaryDir("fsm-sandbox-")

describe("sandbox: --data", () => {
  it.scopedLive("keeps the state across restarts, written atomically, and continues the ids", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "state.json")
      const first = yield* Scope.make()
      const a = yield* Scope.extend(startSandbox({ port: 0, dataFile: file, answerDelayMs: 60_000 }), first)
      const api = call(a, yield* login(a))
      yield* api("POST", "/users", { body: { login: "ana" } })
      yield* api("POST", "/customers", { body: { externalId: "C1", name: "Padaria" } })
      yield* api("POST", "/tasks", { body: { externalId: "OS-1", idUserFrom: 1, taskDate: "2026-12-01" } })
      yield* api("PUT", "/tasks/1/questionnaire-response", {
        body: { itemID: "1", codigoChecklist: "C", codigoPergunta: "P", resposta: "Sim" }
      })
      // Saved shortly after the writes, while still running.
      yield* Effect.sleep("600 millis")
      const saved = JSON.parse(readFileSync(file, "utf8"))
      assert.strictEqual(saved.accounts["sandbox-key"].tables.customers[0].name, "Padaria")
      yield* api("POST", "/customers", { body: { externalId: "C2", name: "Mercado" } })
      yield* Scope.close(first, Exit.void)
      assert.isFalse(existsSync(`${file}.tmp`))

      const b = yield* startSandbox({ port: 0, dataFile: file, answerDelayMs: 60_000 })
      const again = call(b, yield* login(b))
      assert.deepStrictEqual((yield* b.control.records("sandbox-key", "customers")).map((c) => c["externalId"]), [
        "C1",
        "C2"
      ])
      const third = yield* again("POST", "/customers", { body: { externalId: "C3", name: "Feira" } })
      assert.strictEqual(third.body.result.id, 3)
      assert.strictEqual(
        (yield* again("POST", "/customers", { body: { externalId: "C1", name: "Outra" } })).status,
        409
      )
      assert.strictEqual((yield* again("GET", "/tasktypes/1")).status, 200)
      assert.strictEqual(JSON.parse(readFileSync(file, "utf8")).accounts["sandbox-key"].pendingAnswers.length, 1)
    }))

  it.scopedLive("a file that is not sandbox state stops the start with a message naming it", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "broken.json")
      writeFileSync(file, "{not json")
      const broken = yield* Effect.flip(startSandbox({ port: 0, dataFile: file }))
      assert.strictEqual(broken._tag, "SandboxError")
      assert.include(broken.message, file)
      writeFileSync(file, JSON.stringify({ version: 7 }))
      assert.include((yield* Effect.flip(startSandbox({ port: 0, dataFile: file }))).message, "not a sandbox data file")
      const missingDir = join(file, "..", "nowhere", "state.json")
      assert.include((yield* Effect.flip(startSandbox({ port: 0, dataFile: missingDir }))).message, "cannot save")
    }))

  it.scopedLive("a damaged change-log line is skipped and said, never replayed as a record", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "state.json")
      const line = (change: object) => `${JSON.stringify(change)}\n`
      writeFileSync(
        `${file}.log`,
        line({ a: "sandbox-key", t: "customers", k: "1", r: { id: 1, externalId: "C1", name: "Padaria" } }) +
          line({ a: "sandbox-key", t: "customers", k: "9", r: 5 }) +
          line({ a: "sandbox-key", n: { customers: "many" }, p: [1, 2] }) +
          line({ a: "sandbox-key", t: "customers", k: "2", r: { id: 2, externalId: "C2", name: "Mercado" } }) +
          line({ a: "sandbox-key", n: { customers: 3 }, p: [] }) +
          `{"a":"sandbox-key","t":"customers","k":"3","r":{"id":3,"exter` // cut by a crash: skipped silently
      )
      const said: Array<string> = []
      const write = process.stderr.write
      process.stderr.write = ((chunk: string) => (said.push(String(chunk)), true)) as typeof process.stderr.write
      const sandbox = yield* startSandbox({ port: 0, dataFile: file }).pipe(
        Effect.ensuring(Effect.sync(() => void (process.stderr.write = write)))
      )
      const customers = yield* sandbox.control.records("sandbox-key", "customers")
      assert.deepStrictEqual(customers.map((c) => c["externalId"]), ["C1", "C2"])
      const api = call(sandbox, yield* login(sandbox))
      assert.strictEqual(
        (yield* api("POST", "/customers", { body: { externalId: "C4", name: "Feira" } })).body.result.id,
        3
      )
      assert.deepStrictEqual(said, [
        `sandbox: ${file}.log: lines 2, 3 are damaged (not a change the sandbox wrote) and skipped\n`
      ])
    }))
})
