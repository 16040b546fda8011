/**
 * A run and its reruns are one family: each rerun is recorded in the run it came from (`reruns.ndjson`), so
 * - a second rerun of one run checks its corrections against the rows an earlier rerun of it sent (a key that
 *   rerun used is taken), and
 * - `undo` of a run, or of an onboarding, takes back its reruns' records too, latest first, so no record a rerun
 *   made is left pointing at a record the undo deleted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdirSync } from "node:fs"
import * as Path from "node:path"
import { rerun } from "../../src/import/Rerun.js"
import { onboardInto } from "../onboard/support.js"
import {
  apiOf,
  importInto,
  put,
  readReport,
  readSummary,
  recordsByKey,
  startTestSandbox,
  tempDir,
  undoIn
} from "./support.js"

const rerunOf = (
  sandbox: Parameters<typeof apiOf>[0],
  target: string,
  out: string,
  fields: { readonly fixed?: string; readonly only?: ReadonlyArray<"failed" | "in-doubt" | "skipped" | "invalid"> }
) =>
  rerun({ target, only: fields.only, fixed: fields.fixed, dryRun: false, out: () => out }).pipe(
    Effect.provide(apiOf(sandbox))
  )

describe("the reruns of a run", () => {
  it.scopedLive("a second rerun of one run refuses a key an earlier rerun of it used", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      // Rows 3 and 4 have no name: invalid.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,\nK-3,\n"),
        runDir
      })
      const first = yield* rerunOf(sandbox, runDir, Path.join(dir, "r1"), {
        fixed: put(dir, "fix1.csv", "_row,externalId,name\n3,K-9,Nove\n")
      })
      assert.deepStrictEqual(readReport(first.result!.runDir).map((r) => r._status), ["created"])
      assert.isTrue(existsSync(Path.join(runDir, "reruns.ndjson")))

      // The same run again, row 4 corrected to the key row 3 now holds.
      const second = yield* rerunOf(sandbox, runDir, Path.join(dir, "r2"), {
        fixed: put(dir, "fix2.csv", "_row,externalId,name\n4,K-9,Outro\n")
      })
      const [row] = readReport(second.result!.runDir)
      assert.strictEqual(row!._status, "invalid")
      assert.match(row!._error!, /externalId: "K-9" repeats row 3/)
      assert.strictEqual((yield* recordsByKey(sandbox, "customers"))["K-9"]!.description, "Nove")
    }))

  it.scopedLive("undo of an onboarding takes back what its reruns made: no record is left pointing at a deleted one", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const input = Path.join(dir, "in")
      mkdirSync(input)
      // CLI-2's CNPJ has wrong check digits: invalid, and EQ-2, which names it, is skipped.
      put(input, "customers.csv", "externalId,name,cpfCnpj\nCLI-1,Padaria Um,\nCLI-2,Mercado Dois,11222333000182\n")
      put(
        input,
        "equipments.csv",
        "externalId,name,associatedCustomerExternalId\nEQ-1,Split Um,CLI-1\nEQ-2,Split Dois,CLI-2\n"
      )
      const onboarding = Path.join(dir, "onboarding")
      yield* onboardInto(sandbox, { input, runDir: onboarding })
      assert.deepStrictEqual(readReport(Path.join(onboarding, "customers")).map((r) => r._status), [
        "created",
        "invalid"
      ])
      assert.deepStrictEqual(readReport(Path.join(onboarding, "equipments")).map((r) => r._status), [
        "created",
        "skipped"
      ])
      // The follow-ups the onboarding printed: the corrected customer, then the equipment skipped for it.
      const fixed = yield* rerunOf(sandbox, Path.join(onboarding, "customers"), Path.join(dir, "r-customers"), {
        fixed: put(dir, "fix.csv", "_row,cpfCnpj\n3,11222333000181\n")
      })
      assert.deepStrictEqual(readReport(fixed.result!.runDir).map((r) => r._status), ["created"])
      const skipped = yield* rerunOf(sandbox, Path.join(onboarding, "equipments"), Path.join(dir, "r-equipments"), {
        only: ["skipped"]
      })
      assert.deepStrictEqual(readReport(skipped.result!.runDir).map((r) => r._status), ["created"])
      assert.strictEqual(Object.keys(yield* recordsByKey(sandbox, "equipments")).length, 2)

      const undo = yield* undoIn(sandbox, { target: onboarding, runDir: Path.join(dir, "undo") })
      assert.strictEqual(undo.exitCode, 0, JSON.stringify(readReport(undo.runDir)))
      // Each step after its reruns; equipments (which name customers) before customers.
      assert.deepStrictEqual(
        (readSummary(undo.runDir).runs as Array<string>).map((r) => Path.relative(dir, r)),
        ["r-equipments", Path.join("onboarding", "equipments"), "r-customers", Path.join("onboarding", "customers")]
      )
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "equipments"), {})
      assert.deepStrictEqual(yield* recordsByKey(sandbox, "customers"), {})
    }))
})
