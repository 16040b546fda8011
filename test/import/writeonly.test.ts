/**
 * Create-only fields (Resources.ts `createOnly`: users' password): sent when a record is created, left out of an
 * update unless `--send-write-only` asks, and the report says so. Re-importing a users file (or re-running an
 * onboarding) must not reset the passwords people changed since.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { importInto, put, readReport, startTestSandbox, tempDir, writes } from "./support.js"

const usersCsv = (password: string) =>
  [
    "externalId;name;login;password;email;smartPhoneNumber;jobPosition;culture;userType",
    `USR-1;Mariana Costa;mariana.costa;${password};mariana@climatiza.com.br;+55 11 98765-1001;Técnica;pt-BR;3`,
    `USR-2;Bruno Lima;bruno.lima;${password};bruno@climatiza.com.br;+55 11 98765-1002;Técnico;pt-BR;3`
  ].join("\r\n") + "\r\n"

describe("create-only fields", () => {
  it.scopedLive("a second import of a users file sends no password: unchanged, with a note; --send-write-only sends it", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const file = put(dir, "usuarios.csv", usersCsv("Inicial@2026"))
      const first = yield* importInto(sandbox, { resource: "users", file, runDir: Path.join(dir, "create") })
      assert.strictEqual(first.exitCode, 0)
      assert.deepStrictEqual(readReport(Path.join(dir, "create")).map((r) => r._status), ["created", "created"])
      const afterCreate = writes(yield* sandbox.control.requests).length

      // The workbook still holds the first password; the users changed theirs since.
      const again = Path.join(dir, "again")
      const second = yield* importInto(sandbox, { resource: "users", file, runDir: again })
      assert.strictEqual(second.exitCode, 0)
      for (const row of readReport(again)) {
        assert.strictEqual(row._status, "unchanged")
        assert.include(row._error, "password not sent: the record exists")
        assert.include(row._error, "--send-write-only")
      }
      assert.strictEqual(writes(yield* sandbox.control.requests).length, afterCreate, "no write reached the server")

      // A changed name is updated, still without the password.
      const renamed = put(dir, "usuarios-2.csv", usersCsv("Inicial@2026").replace("Mariana Costa", "Mariana C. Costa"))
      const update = Path.join(dir, "update")
      yield* importInto(sandbox, { resource: "users", file: renamed, runDir: update })
      const updated = readReport(update)
      assert.deepStrictEqual(updated.map((r) => r._status), ["updated", "unchanged"])
      assert.include(updated[0]!._error, "password not sent")

      // Asked for: the password is sent to the existing records.
      const asked = Path.join(dir, "asked")
      yield* importInto(sandbox, { resource: "users", file, runDir: asked, sendWriteOnly: true })
      const sent = readReport(asked)
      assert.deepStrictEqual(sent.map((r) => r._status), ["updated", "updated"])
      assert.notInclude(sent[1]!._error ?? "", "password not sent")
    }))
})
