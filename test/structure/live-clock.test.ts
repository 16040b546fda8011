/**
 * A test against a real server (the fleet's store on PostgreSQL or Redis, the sandbox over loopback) runs on the live
 * clock. `it.effect` and `it.scoped` run under Effect's TestClock, where time moves only when the test moves it: a
 * wait the code under test makes through Effect's clock (a store operation tried again after a transient failure, a
 * request retried after a pause, a timeout) never ends, so a server's transient answer hangs the test until vitest
 * gives up instead of failing it with a message. (The clean-clone run at 62f2661 had source-address.test.ts hang on
 * `it.scoped`, 120 s in both tries; its cause is not known, and the store it opens does not retry, so this is a
 * hazard closed, not that hang explained.)
 *
 * The rule over every test file: one that starts a real server or opens a store uses `it.scopedLive` / `it.live`,
 * unless it drives the TestClock itself (it calls `TestClock.…`: its waits are the ones it moves).
 */
import * as fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const repo = Path.resolve(import.meta.dirname, "../..")

const testFiles = (dir: string): Array<string> =>
  fs.readdirSync(Path.join(repo, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? testFiles(Path.join(dir, e.name))
      : e.name.endsWith(".test.ts")
      ? [Path.join(dir, e.name).split(Path.sep).join("/")]
      : []
  )

/** What starts a real server, or opens the fleet's store on one (called, or yielded as an effect). */
const realServer =
  /\b(?:startFleetBackend|startPostgres|startRedis|startRedisWith|initialisedPostgres|openStore|withStore|start\w*Sandbox|acmeFleet|acmeBetaFleet)\b/

/** A test on the TestClock: `it.effect` or `it.scoped`, also with `.each`, `.skipIf`, `.only`… or type arguments. */
const onTestClock = /\bit\.(?:effect|scoped)\b(?!Live)(?:\s*\.\w+(?:\([^)]*\))?)*\s*(?:<[^>]*>)?\s*\(/g

/** The `file:line` of each test on the TestClock in a file that meets a real server and moves no TestClock. */
export const testClockOnRealServers = (files: ReadonlyArray<{ readonly file: string; readonly text: string }>) =>
  files.flatMap(({ file, text }) =>
    !realServer.test(text) || /\bTestClock\.\w+/.test(text)
      ? []
      : [...text.matchAll(onTestClock)].map((m) => `${file}:${text.slice(0, m.index).split("\n").length}`)
  )

describe("tests against real servers", () => {
  it("run on the live clock: no it.effect or it.scoped in a file that starts a server and moves no TestClock", () => {
    const files = testFiles("test").map((file) => ({ file, text: fs.readFileSync(Path.join(repo, file), "utf8") }))
    expect(testClockOnRealServers(files)).toEqual([])
  })

  it("the rule sees such a test, with .each and .skipIf too, and lets the live ones and TestClock's own pass", () => {
    const store = `const { url } = yield* startFleetBackend("postgres")\n`
    expect(testClockOnRealServers([
      { file: "a.test.ts", text: `it.scoped("x", () =>\n${store})` },
      { file: "b.test.ts", text: `x\nit.scoped.each(backends)("y", () =>\n${store})` },
      { file: "c.test.ts", text: `it.effect.skipIf(no)("z", () =>\n${store})` },
      { file: "d.test.ts", text: `it.scopedLive("live", () =>\n${store})` },
      { file: "e.test.ts", text: `it.scoped("moved", () =>\n${store}TestClock.adjust("1 second"))` },
      { file: "f.test.ts", text: `it.scoped("no server", () => Effect.void)` },
      { file: "g.test.ts", text: `it.scoped("yielded", () =>\nyield* initialisedPostgres)` },
      { file: "h.test.ts", text: `x\nit.scoped\n  .skipIf(no)("split", () =>\nyield* startTestSandbox())` },
      { file: "i.test.ts", text: `// TestClock is not moved here\nit.effect("named only", () =>\n${store})` }
    ])).toEqual(["a.test.ts:1", "b.test.ts:2", "c.test.ts:1", "g.test.ts:1", "h.test.ts:2", "i.test.ts:2"])
  })
})
