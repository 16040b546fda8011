/**
 * Onboarding a directory received from someone else: attachment cells leading out of the directory (or to procfs)
 * make their rows invalid and nothing of them is sent; `--attachments-root` widens the folder, from the command
 * line too.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import * as Path from "node:path"
import { onboardInto, put, readReport, runCli, startTestSandbox, tempDir, writes } from "./support.js"

const input = (dir: string) => {
  const folder = Path.join(dir, "input")
  mkdirSync(Path.join(folder, "anexos"), { recursive: true })
  put(dir, "shared.pdf", "%PDF-1.4 compartilhado\n")
  put(folder, Path.join("anexos", "contrato.pdf"), "%PDF-1.4 contrato\n")
  put(folder, "customers.csv", "externalId,name\nCLI-1,Padaria\n")
  put(
    folder,
    "customer-attachments.csv",
    "customerExternalId,file\nCLI-1,anexos/contrato.pdf\nCLI-1,../shared.pdf\nCLI-1,/proc/self/environ\n"
  )
  return folder
}

describe("onboard: attachments stay inside the input's folder", () => {
  it.scopedLive("files outside the directory are refused per row; --attachments-root widens it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const folder = input(dir)
      const sandbox = yield* startTestSandbox()
      const narrow = yield* onboardInto(sandbox, { input: folder, runDir: Path.join(dir, "narrow") })
      const step = narrow.summary.steps.find((s) => s.resource === "customer-attachments")!
      const report = readReport(step.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["updated", "invalid", "invalid"])
      assert.include(report[1]!._error, `file: "../shared.pdf" is outside the attachments folder ${folder}`)
      assert.include(report[2]!._error, `file: "/proc/self/environ" is outside the attachments folder`)
      assert.strictEqual(writes(yield* sandbox.control.requests).filter((w) => /attachments$/.test(w.path)).length, 1)

      const wide = yield* runCli(
        ["onboard", folder, "--attachments-root", dir, "--out", Path.join(dir, "wide")],
        dir,
        sandbox
      )
      assert.strictEqual(wide.code, 1, wide.stderr)
      const again = readReport(Path.join(dir, "wide", "customer-attachments"))
      assert.deepStrictEqual(again.map((r) => r._status), ["updated", "updated", "invalid"])
      assert.include(again[2]!._error, `file: "/proc/self/environ" is outside the attachments folder ${dir}`)
    }))
})
