/**
 * `fsm-bulk export --redact … --redact-key FILE` as users run it: the key created with mode 0600 and a warning,
 * the manifest naming what was redacted, `verify` passing; bad usage (no key, a key inside --out, a key field)
 * refused with exit code 2 before anything is written.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { accountA, cliEnv, runCli, seededSandbox, tempDir } from "./support.js"

describe("fsm-bulk export --redact", () => {
  it.live(
    "creates the key (0600), redacts, records it in the manifest, and the export verifies",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const work = yield* tempDir
        const out = Path.join(work, "copy")
        const key = Path.join(work, "redaction.key")
        const run = yield* Effect.promise(() =>
          runCli(
            ["export", "--out", out, "--redact", "pii", "--redact-key", key, "--excel-br"],
            cliEnv(sandbox, accountA)
          )
        )
        assert.strictEqual(run.code, 0, run.stderr)
        assert.match(run.stderr, /created the redaction key .*redaction\.key \(mode 0600\)/)
        assert.strictEqual(statSync(key).mode & 0o777, 0o600)
        const manifest = JSON.parse(readFileSync(Path.join(out, "manifest.json"), "utf8"))
        assert.strictEqual(manifest.redaction.method, "hmac-sha256")
        assert.deepInclude(manifest.redaction.fields, { resource: "users", field: "email", fake: "email" })
        assert.isFalse(manifest.redaction.fields.some((f: { resource: string }) => f.resource === "customers-complete"))
        assert.match(run.stderr, /redacted: \d+ fields of personal data replaced with fakes \(key [0-9a-f]{16}/)
        assert.notInclude(JSON.stringify(manifest), readFileSync(key, "utf8").trim())
        assert.notInclude(readFileSync(Path.join(out, "users.csv"), "utf8"), "Ana Souza")
        const verified = yield* Effect.promise(() => runCli(["verify", out]))
        assert.strictEqual(verified.code, 0, verified.stdout + verified.stderr)

        // A second export with the key does not warn again, and makes the same fakes.
        const again = Path.join(work, "again")
        const second = yield* Effect.promise(() =>
          runCli(
            ["export", "users", "--out", again, "--redact", "pii", "--redact-key", key, "--excel-br"],
            cliEnv(sandbox, accountA)
          )
        )
        assert.strictEqual(second.code, 0, second.stderr)
        assert.notMatch(second.stderr, /created the redaction key/)
        assert.strictEqual(
          readFileSync(Path.join(again, "users.csv"), "utf8"),
          readFileSync(Path.join(out, "users.csv"), "utf8")
        )
      }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
    180_000
  )

  it.live(
    "refuses --redact without a key, a key inside --out, and a key field, with exit code 2",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seededSandbox
        const work = yield* tempDir
        const out = Path.join(work, "copy")
        const cases = [
          [["--redact", "pii"], /--redact needs --redact-key FILE/],
          [
            ["--redact", "pii", "--redact-key", Path.join(out, "k")],
            /must not be kept in the export's --out directory/
          ],
          [
            ["--redact", "customers.externalId", "--redact-key", Path.join(work, "k")],
            /customers\.externalId cannot be redacted: it is a key/
          ]
        ] as const
        for (const [flags, message] of cases) {
          const run = yield* Effect.promise(() => runCli(["export", "--out", out, ...flags], cliEnv(sandbox, accountA)))
          assert.strictEqual(run.code, 2, run.stderr)
          assert.match(run.stderr, message)
          assert.isFalse(existsSync(Path.join(out, "manifest.json")))
        }
      }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
    120_000
  )
})
