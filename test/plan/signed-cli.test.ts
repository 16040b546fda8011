/**
 * Signed plans as a user runs them (`node dist/bin.js`, built first): `--sign KEY` on a dry run with `--plan`
 * writes `PLAN.sig`; `plan show` says who signed; `apply --public-key PUB` refuses an edited plan, a plan signed by
 * another key and an unsigned one (exit 2, nothing sent), and the applied run records the signer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { cp1252, put, readSummary, runCli, startTestSandbox, tempDir, writes } from "../import/support.js"
import { lastJson } from "../support.js"
import { planCsv, seed } from "./support.js"

describe("signed plans", () => {
  it.scopedLive(
    "apply --public-key applies only the plan as signed, by that key; the run records the signer",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        yield* seed(sandbox, dir)
        const made = yield* runCli(["keys", "new", "--out", "keys"], undefined, dir)
        assert.strictEqual(made.code, 0, made.stderr)
        const other = yield* runCli(["keys", "new", "--out", "outras"], undefined, dir)
        assert.strictEqual(other.code, 0, other.stderr)
        const key = Path.join(dir, "keys", "fsm-bulk-signing.key")
        const pub = Path.join(dir, "keys", "fsm-bulk-signing.pub")
        const otherPub = Path.join(dir, "outras", "fsm-bulk-signing.pub")

        const file = put(dir, "clientes.csv", cp1252(planCsv))
        const planFile = Path.join(dir, "clientes.plan.json")
        const unsignedPlan = Path.join(dir, "sem-assinatura.plan.json")
        const dry = yield* runCli(
          ["import", "customers", file, "--dry-run", "--plan", planFile, "--out", "dry", "--sign", key],
          sandbox,
          dir
        )
        assert.strictEqual(dry.code, 1, dry.stderr) // row 7 is invalid
        assert.isTrue(existsSync(`${planFile}.sig`), dry.stderr)
        assert.include(dry.stderr, `signed: ${planFile}.sig`)
        const unsigned = yield* runCli(
          ["import", "customers", file, "--dry-run", "--plan", unsignedPlan, "--out", "dry2"],
          sandbox,
          dir
        )
        assert.strictEqual(unsigned.code, 1, unsigned.stderr)

        const shown = yield* runCli(["plan", "show", planFile, "--json"], sandbox, dir)
        const keyId = lastJson(shown.stdout).signature.keyId as string
        assert.strictEqual(lastJson(shown.stdout).signature.status, "valid")
        const shownText = yield* runCli(["plan", "show", planFile], sandbox, dir)
        assert.include(shownText.stdout, `  signature  signed by key ${keyId}`)
        const shownUnsigned = yield* runCli(["plan", "show", unsignedPlan], sandbox, dir)
        assert.include(shownUnsigned.stdout, "  signature  unsigned")

        // Edited after it was signed: one row's write taken out of the plan.
        const original = readFileSync(planFile)
        const plan = JSON.parse(original.toString("utf8"))
        plan.plan = plan.plan.filter((p: any) => p.key !== "K-4")
        writeFileSync(planFile, JSON.stringify(plan, null, 1) + "\n")
        const before = writes(yield* sandbox.control.requests).length
        const edited = yield* runCli(["apply", planFile, "--public-key", pub], sandbox, dir)
        assert.strictEqual(edited.code, 2, edited.stderr)
        assert.include(edited.stderr, "the plan's signature does not hold")
        assert.include(edited.stderr, "clientes.plan.json was changed after it was signed")
        // Without --public-key the signature beside the plan is still checked.
        const editedNoKey = yield* runCli(["apply", planFile], sandbox, dir)
        assert.strictEqual(editedNoKey.code, 2, editedNoKey.stderr)
        writeFileSync(planFile, original)

        const otherKey = yield* runCli(["apply", planFile, "--public-key", otherPub], sandbox, dir)
        assert.strictEqual(otherKey.code, 2, otherKey.stderr)
        assert.include(otherKey.stderr, "not by")
        const noSignature = yield* runCli(["apply", unsignedPlan, "--public-key", pub], sandbox, dir)
        assert.strictEqual(noSignature.code, 2, noSignature.stderr)
        assert.include(noSignature.stderr, "the plan is unsigned")
        assert.strictEqual(writes(yield* sandbox.control.requests).length, before)

        const applied = yield* runCli(
          ["apply", planFile, "--public-key", pub, "--approved-by", "Ana", "--out", "applied"],
          sandbox,
          dir
        )
        assert.strictEqual(applied.code, 1, applied.stderr) // row 7, invalid as planned
        assert.include(applied.stderr, `signed   plan: signature by ${keyId.slice(0, 16)}`)
        assert.deepStrictEqual(readSummary(Path.join(dir, "applied")).plan.signer, { keyId, trusted: true })
      }),
    180_000
  )
})
