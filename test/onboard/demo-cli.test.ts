/**
 * `npm start` is `node dist/bin.js demo`: end to end against the embedded sandbox with its default budget
 * (400/60s), the example workbook onboarded with --verify, exported and verified, exit 0.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { readJson, readReport, root, runCli, tempDir } from "./support.js"

describe("fsm-bulk demo", () => {
  it.scopedLive(
    "onboards the example company, exports it, verifies the export, and says where everything is",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const out = Path.join(dir, "demo")
        const cli = yield* runCli(["demo", "--out", out, "--json"], dir)
        assert.strictEqual(cli.code, 0, cli.stderr)
        assert.strictEqual(
          JSON.parse(readFileSync(Path.join(root, "package.json"), "utf8")).scripts.start,
          "node dist/bin.js demo"
        )

        const result = JSON.parse(cli.stdout.trim().split("\n").at(-1)!)
        assert.strictEqual(result.exitCode, 0)
        assert.strictEqual(result.input, Path.join(root, "templates/example-onboarding.xlsx"))
        assert.strictEqual(result.onboarding.counts.confirmed, 12)
        assert.strictEqual(result.onboarding.exitCode, 0)
        assert.strictEqual(result.verify.ok, true)
        // Well inside the default budget of 400 requests a minute, so nothing waits for the window.
        assert.isBelow(result.onboarding.requests + result.export.requests, 400)
        assert.strictEqual(result.onboarding.rateLimited, 0)

        // The files it points at are there.
        const summary = readJson(Path.join(out, "summary.json"))
        assert.strictEqual(summary.steps.length, 20)
        for (const step of summary.steps) {
          assert.isTrue(existsSync(Path.join(out, step.resource, "report.csv")), step.resource)
          assert.isTrue(existsSync(Path.join(out, step.resource, "report.xlsx")), step.resource)
        }
        assert.deepStrictEqual(
          readReport(Path.join(out, "questionnaire-answers")).map((r) => r._status),
          Array(12).fill("confirmed")
        )
        const manifest = readJson(Path.join(out, "export", "manifest.json"))
        const exported = Object.fromEntries(
          (manifest.resources as Array<{ name: string; rows: number }>).map((r) => [r.name, r.rows])
        )
        assert.strictEqual(exported.customers, 10)
        assert.strictEqual(exported.tasks, 10)
        assert.strictEqual(exported.equipments, 12)
        assert.match(cli.stderr, /embedded sandbox/)
        assert.match(cli.stderr, new RegExp(`export: +${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/export`))
        assert.match(cli.stderr, /verify: every checksum and row count matches/)

        // And the export stays verifiable on its own.
        const verify = yield* runCli(["verify", Path.join(out, "export")], dir)
        assert.strictEqual(verify.code, 0, verify.stderr)
      }),
    90_000
  )
})
