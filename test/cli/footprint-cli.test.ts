/**
 * What a command loads is part of its memory: `validate` runs without the packages only other commands need
 * (the HTTP client's undici, the fleet's database clients, the emulator's WebSocket server) and without the
 * `effect` index, which would load every module of the package (docs/development.md, "What every process loads").
 * The built CLI runs with a module hook that lists every ES module it loads and every CommonJS one it requires;
 * what the bundle's files it loaded hold (dist/bin.js and its chunks) is read from their source maps.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { customersCsv, runCli } from "../import/support.js"
import { temporaryDir } from "../support.js"
import { bundleFiles } from "./support.js"

describe("what validate loads", () => {
  it.scoped("neither the effect index nor undici, pg, ioredis, bullmq or ws", () =>
    Effect.gen(function*() {
      const dir = yield* temporaryDir("fsm-footprint-")
      const esm = Path.join(dir, "esm.txt")
      const cjs = Path.join(dir, "cjs.json")
      writeFileSync(esm, "")
      writeFileSync(
        Path.join(dir, "hooks.mjs"),
        `import { appendFileSync } from "node:fs"\n` +
          `export async function load(url, context, next) {\n` +
          `  appendFileSync(${JSON.stringify(esm)}, url + "\\n")\n` +
          `  return next(url, context)\n}\n`
      )
      writeFileSync(
        Path.join(dir, "register.mjs"),
        `import { register } from "node:module"\nregister("./hooks.mjs", import.meta.url)\n`
      )
      writeFileSync(
        Path.join(dir, "required.cjs"),
        `process.on("exit", () => require("node:fs").writeFileSync(${
          JSON.stringify(cjs)
        }, JSON.stringify(Object.keys(require.cache))))\n`
      )
      writeFileSync(Path.join(dir, "customers.csv"), customersCsv(20))
      const run = yield* runCli(["validate", "customers", "customers.csv", "--out", "run"], undefined, dir, {
        NODE_OPTIONS: `--import ${Path.join(dir, "register.mjs")} --require ${Path.join(dir, "required.cjs")}`
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const modules = readFileSync(esm, "utf8").split("\n").filter((u) => u !== "")
      const required = JSON.parse(readFileSync(cjs, "utf8")) as Array<string>
      const sources = bundleFiles(modules).flatMap((b) => b.sources)
      // The run did load the Effect code it uses, from the bundle, and nothing of the effect index's own.
      // (a bundle's map names the packages' own sources where they ship maps: effect/src/…)
      assert.isTrue(sources.some((u) => u.includes("/node_modules/effect/")), "no effect code loaded")
      assert.deepStrictEqual(
        [...modules, ...sources].filter((u) =>
          /\/node_modules\/effect\/(dist\/esm\/index\.js|src\/index\.ts)$/.test(u)
        ),
        []
      )
      const packages = [...modules, ...required, ...sources].flatMap((p) => {
        const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p)
        return m === null ? [] : [m[1]!]
      })
      for (const heavy of ["undici", "pg", "ioredis", "bullmq", "ws"]) {
        assert.notInclude(packages, heavy, `validate loaded ${heavy}`)
      }
    }))
})
