/**
 * report.html links only to files inside the run directory (issue 28, item 11): a summary.json edited by anyone
 * (a `javascript:` step path, an absolute path, `..`) never becomes a link that runs script or leaves the folder.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { runCli, tempDir } from "../import/support.js"

const step = (resource: string, runDir: string) => ({ resource, runDir, rows: 1, counts: { created: 1 }, exitCode: 0 })

describe("report.html links", () => {
  it.scopedLive("a tampered onboarding summary: every href is a relative file link inside the run, or there is none", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      mkdirSync(Path.join(dir, "customers"))
      writeFileSync(
        Path.join(dir, "summary.json"),
        JSON.stringify({
          command: "onboard",
          rows: 5,
          counts: { created: 5 },
          exitCode: 0,
          steps: [
            step("customers", "customers"),
            step("users", "javascript:alert(document.domain)"),
            step("teams", "JaVaScRiPt:alert(1)//"),
            step("segments", "/etc"),
            step("keywords", "../elsewhere"),
            step("products", "data:text/html,<script>alert(1)</script>")
          ]
        })
      )
      // `report .` from inside the run: the step paths are read relative to it as they are.
      const run = yield* runCli(["report", "."], undefined, dir)
      assert.strictEqual(run.code, 0, run.stderr)
      const html = readFileSync(Path.join(dir, "report.html"), "utf8")
      const hrefs = [...html.matchAll(/\bhref\s*=\s*"([^"]*)"/gi)].map((m) => m[1]!)
      assert.include(hrefs, "customers/report.html")
      for (const href of hrefs) {
        assert.notMatch(href, /^[a-z][a-z0-9+.-]*:/i, `a scheme in ${href}`)
        assert.notMatch(href, /^[\\/]/, `an absolute path in ${href}`)
        assert.notInclude(href.split("/"), "..", `a way out in ${href}`)
      }
      assert.notMatch(html, /<script/i)
      assert.notMatch(html, /\son[a-z]+\s*=/i)
    }))
})
