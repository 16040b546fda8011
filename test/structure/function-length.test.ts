/**
 * No function in src/client/, src/import/ and src/fleet/ over 100 lines of its own (issue 26):
 * `scripts/function-length.mjs`, run by `npm run lint:layers`, which `npm test` runs on the repository before the tests
 * (so it is not run again here). A function's own lines are its lines less those of the functions it defines.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const repo = Path.resolve(import.meta.dirname, "../..")
const script = Path.join(repo, "scripts/function-length.mjs")
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })))

const check = async (args: ReadonlyArray<string>) => {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, ...args], { cwd: repo })
    return { code: 0, out: stdout }
  } catch (e) {
    const failed = e as { code: number; stdout: string }
    return { code: failed.code, out: failed.stdout }
  }
}

/** A file of `text` in a fresh directory; its path. */
const source = (text: string) => {
  const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "fsm-length-"))
  dirs.push(dir)
  const file = Path.join(dir, "Long.ts")
  fs.writeFileSync(file, text)
  return file
}
/** `n` statements, one a line. */
const statements = (n: number, indent = "  ") =>
  Array.from({ length: n }, (_, i) => `${indent}total += ${i}`).join("\n")
/** A function of exactly `lines` lines (its first and last lines included). */
const fn = (name: string, lines: number) =>
  `export const ${name} = () => {\n  let total = 0\n${statements(lines - 4)}\n  return total\n}\n`

describe("the function-length rule", () => {
  it("refuses a function of 101 lines, naming file, line and length, and passes one of 100", async () => {
    const file = source(`${fn("fine", 100)}\n${fn("tooLong", 101)}`)
    const { code, out } = await check([file])
    expect(code).toBe(1)
    expect(out.trim()).toBe(`${file}:102 tooLong: 101 lines of its own (at most 100)`)
  }, 60_000)

  it("counts a function's own lines: the functions it defines are theirs", async () => {
    // 150 lines in all, of which an inner function of 80: 71 of its own.
    const inner = `  const inner = function*() {\n    let total = 0\n${statements(76, "    ")}\n    return total\n  }\n`
    const outer = `export const outer = () => {\n  let total = 0\n${inner}${statements(66)}\n  return total\n}\n`
    expect(outer.trimEnd().split("\n")).toHaveLength(150)
    const passed = await check([source(outer)])
    expect(passed.out).toContain("no function over 100 lines of its own")
    expect(passed.code).toBe(0)
    expect((await check(["--max", "70", source(outer)])).out).toContain("outer: 71 lines of its own (at most 70)")
  }, 60_000)
})
