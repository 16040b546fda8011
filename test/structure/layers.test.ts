/**
 * The map of the code as a lint (`.dependency-cruiser.cjs`, `npm run lint:layers`): the rule must refuse what the
 * map forbids. Checked on small trees laid out like src/, so the test is quick and each case names one rule; the
 * real tree is checked by `npm test` itself (`lint:layers`).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const repo = Path.resolve(import.meta.dirname, "../..")
const depcruise = Path.join(repo, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs")
const dirs: Array<string> = []
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })))

/** Cruises a tree of `files` (path → source) with the project's rules; the violations it prints, and its exit code. */
const cruise = async (files: Readonly<Record<string, string>>) => {
  const dir = fs.mkdtempSync(Path.join(os.tmpdir(), "fsm-layers-"))
  dirs.push(dir)
  fs.copyFileSync(Path.join(repo, ".dependency-cruiser.cjs"), Path.join(dir, ".dependency-cruiser.cjs"))
  fs.copyFileSync(Path.join(repo, "tsconfig.json"), Path.join(dir, "tsconfig.json"))
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(Path.dirname(Path.join(dir, file)), { recursive: true })
    fs.writeFileSync(Path.join(dir, file), text)
  }
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [
      depcruise,
      "src",
      "--config",
      ".dependency-cruiser.cjs"
    ], {
      cwd: dir
    })
    return { code: 0, out: stdout }
  } catch (e) {
    const failed = e as { code: number; stdout: string }
    return { code: failed.code, out: failed.stdout }
  }
}

const base = {
  "src/Errors.ts": "export const e = 1\n",
  "src/files/Read.ts": "import { e } from \"../Errors.js\"\nexport const read = e\n",
  "src/cli/Output.ts": "import { read } from \"../files/Read.js\"\nexport const say = read\n",
  "src/import/Pipeline.ts": "import { read } from \"../files/Read.js\"\nexport const run = read\n",
  "src/import/Commands.ts":
    "import { say } from \"../cli/Output.js\"\nimport { run } from \"./Pipeline.js\"\nexport const c = [say, run]\n"
}

describe("the map of the code as a lint", () => {
  it("passes a tree that keeps the map: the command module may use the command line", async () => {
    const { code, out } = await cruise(base)
    expect(out).toContain("no dependency violations")
    expect(code).toBe(0)
  }, 60_000)

  it(
    "refuses a module below the command line that imports it, a folder importing one above it, and a circle",
    async () => {
      const { code, out } = await cruise({
        ...base,
        // the pipeline may not print through src/cli/ (only command modules may)
        "src/import/Pipeline.ts": "import { say } from \"../cli/Output.js\"\nexport const run = say\n",
        // files/ is below import/
        "src/files/Read.ts":
          "import { e } from \"../Errors.js\"\nimport type { run } from \"../import/Pipeline.js\"\nexport const read: typeof run = e\n",
        // two modules of one folder importing each other
        "src/client/A.ts": "import { b } from \"./B.js\"\nexport const a = () => b\n",
        "src/client/B.ts": "import { a } from \"./A.js\"\nexport const b = () => a\n",
        // a module in no row of the map
        "src/Stray.ts": "export const stray = 1\n"
      })
      expect(code).not.toBe(0)
      expect(out).toMatch(/layer-\d+: src\/import\/Pipeline\.ts → src\/cli\/Output\.ts/)
      expect(out).toMatch(/layer-\d+: src\/files\/Read\.ts → src\/import\/Pipeline\.ts/)
      expect(out).toMatch(/no-circular: src\/client\/(A|B)\.ts/)
      expect(out).toMatch(/unplaced: src\/Stray\.ts/)
    },
    60_000
  )
})
