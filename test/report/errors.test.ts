/**
 * The errors part of report.html: a stopped run's kinds keep the `resume` command exactly as it must be typed (its
 * run directory's digits were turned into `N`), and an onboarding's page, which has no rows of its own, shows its
 * steps' kinds of error instead of saying that no row has one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { errorKind } from "../../src/console/ErrorKinds.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import { RunStop } from "../../src/Signals.js"
import { importWith, put, readSummary, startTestSandbox, tempDir, writes } from "../import/support.js"
import { onboardInto } from "../onboard/support.js"

describe("report.html's errors", () => {
  it.scopedLive("a stopped run's kind keeps the resume command's path; an onboarding's page shows its steps' errors", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 1_000 } })
      const dir = yield* tempDir
      const runDir = Path.join(dir, "runs", "20261127T101500Z-customers")
      const stopped = Effect.gen(function*() {
        while (writes(yield* sandbox.control.requests).length < 1) yield* Effect.sleep(10)
      })
      yield* importWith(sandbox, {
        resource: "customers",
        file: put(dir, "c.csv", "externalId,name\nK-1,Um\nK-2,Dois\nK-3,Três\n"),
        runDir,
        graceMs: 50,
        concurrency: 1
      }, RunStop.when(stopped))
      const kinds = readSummary(runDir).errors.map((e: { kind: string }) => e.kind) as Array<string>
      assert.isTrue(kinds.some((k) => k.includes(`\`fsm-bulk resume ${runDir}\``)), kinds.join("\n"))
      const page = readFileSync(Path.join(runDir, "report.html"), "utf8")
      assert.include(page, `fsm-bulk resume ${runDir}`)
      assert.strictEqual(
        errorKind("cannot read docs/2026/contrato-12.pdf: row 12"),
        "cannot read docs/2026/contrato-12.pdf: row N"
      )

      yield* sandbox.control.setFaults({ latencyMs: 0 })
      const input = Path.join(dir, "in")
      mkdirSync(input)
      put(input, "customers.csv", "externalId,name,cpfCnpj\nCLI-1,Padaria Um,\nCLI-2,Mercado Dois,11222333000182\n")
      const onboarding = Path.join(dir, "onboarding")
      yield* onboardInto(sandbox, { input, runDir: onboarding })
      const top = readFileSync(Path.join(onboarding, "report.html"), "utf8")
      assert.notInclude(top, "No row has an error")
      assert.match(top, /customers: cpfCnpj/)
    }))
})
