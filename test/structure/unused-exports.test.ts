/**
 * No export that only its own file uses (issue 26, item 5): `scripts/unused-exports.mjs`, run by `npm run
 * lint:layers`, which `npm test` runs on the repository before the tests (so it is not run again here): it refuses,
 * naming file, line and name, an export no other file of src/, test/ or scripts/ writes.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const script = Path.resolve(import.meta.dirname, "../../scripts/unused-exports.mjs")
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })))

const check = async (root: string) => {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, "--root", root], { cwd: root })
    return { code: 0, out: stdout }
  } catch (e) {
    const failed = e as { code: number; stdout: string }
    return { code: failed.code, out: failed.stdout }
  }
}

/** A repository of `files` (path → text) in a fresh directory; its root. */
const repository = (files: Record<string, string>) => {
  const root = fs.mkdtempSync(Path.join(os.tmpdir(), "fsm-exports-"))
  dirs.push(root)
  for (const [path, text] of Object.entries(files)) {
    fs.mkdirSync(Path.dirname(Path.join(root, path)), { recursive: true })
    fs.writeFileSync(Path.join(root, path), text)
  }
  return root
}

const shapes = [
  "export const used = 1",
  "export const onlyHere = 2",
  "export function alsoHere() { return onlyHere }",
  "export interface Shape { readonly used: number }",
  "const local = 3",
  "export { local }",
  "export default used"
].join("\n")

describe("the unused-exports rule", () => {
  it(
    "refuses each export no other file writes (declarations and export lists), naming file, line and name",
    async () => {
      const root = repository({
        "src/a/Shapes.ts": shapes,
        "src/b/Use.ts": `import { used } from "../a/Shapes.js"\nexport const twice = used * 2\n`,
        "test/use.test.ts": `import { twice } from "../src/b/Use.js"\nconsole.log(twice)\n`
      })
      const { code, out } = await check(root)
      expect(code).toBe(1)
      expect(out.trim().split("\n")).toEqual([
        "src/a/Shapes.ts:2 onlyHere: exported, used only in its own file",
        "src/a/Shapes.ts:3 alsoHere: exported, used only in its own file",
        "src/a/Shapes.ts:4 Shape: exported, used only in its own file",
        "src/a/Shapes.ts:6 local: exported, used only in its own file"
      ])
    },
    60_000
  )

  it("counts a use in tests, in scripts (a bench's import from dist/) and through a namespace", async () => {
    const root = repository({
      "src/a/Shapes.ts": shapes,
      "src/b/Use.ts": `import * as S from "../a/Shapes.js"\nexport const twice = S.used * S.onlyHere\n`,
      "test/use.test.ts": `import type { Shape } from "../src/a/Shapes.js"\nexport const s: Shape = { used: 1 }\n`,
      "scripts/bench.mjs":
        `import { alsoHere, local } from "../dist/a/Shapes.js"\nimport { twice } from "../dist/b/Use.js"\n` +
        `console.log(alsoHere(), local, twice)\n`
    })
    expect(await check(root)).toEqual({ code: 0, out: "unused exports: none in 2 files of src/\n" })
  }, 60_000)
})
