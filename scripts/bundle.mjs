/**
 * Bundles the CLI: `src/bin.ts` and everything it imports (our modules and the Effect packages) into
 * `dist/bin.js`, with the code that only some commands load (the sandbox's server, the fleet, the HTTP client…) in
 * chunks beside it (`dist/bin-*.js`) that load when their command runs. One file read instead of some 900 resolved
 * and compiled one by one: the start-up every spawned command pays (docs/development.md, "The build";
 * figures in docs/benchmarks.md). Run by `npm run build` after tsc, which type-checks and still emits dist/**.js
 * for what tests, scripts and workers import.
 *
 * What stays a package of its own, loaded from node_modules when a command needs it (`external`): exceljs (its
 * parse-sax is replaced in Node's module cache by files/ExcelSax.ts, which needs exceljs loaded by Node from its
 * own files), and the native optional parts of the fleet's packages: msgpackr-extract (bullmq's msgpackr) and
 * pg-native.
 *
 * The fleet's packages, pg, ioredis and bullmq, are bundled into chunks that only the fleet's commands load (src/
 * loads them through fleet/Packages.ts, which reads a CommonJS package's names from `default`, as a chunk gives
 * it). Their files that read `__dirname` or `__filename` get the place that file has in node_modules at run time
 * (`wherePackagesAre`, and `__fsmPackageFile` in the banner). docs/development.md, "The build"; the figures in
 * docs/benchmarks.md, "Start-up of a command" (`node test/bench/fleet-startup-pair.mjs OLD_BIN NEW_BIN`).
 *
 * Where a module is: every `import.meta.url` in src/ is rewritten to the URL the module has in tsc's dist/
 * (`src/files/Csv.ts` → `dist/files/Csv.js`), so what a module finds beside or above itself (the CSV parser
 * thread `files/CsvParseWorker.js`, `../package.json`, schemas/, docs/, templates/, exceljs through
 * `createRequire`) is found from the bundle as from tsc's output. For that, every file of the bundle sits directly
 * in dist/ (checked below).
 *
 * tsc's own entry is kept as `dist/unbundled.js`: `node dist/unbundled.js …` runs the CLI module by module, to
 * tell a fault of the bundle from one of the code.
 *
 *   node scripts/bundle.mjs            # after tsc: writes dist/bin.js, dist/bin-*.js and their source maps
 */
import * as esbuild from "esbuild"
import { existsSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")
const src = Path.join(root, "src")
const dist = Path.join(root, "dist")

/** Loaded from node_modules at run time, never bundled (see the header). */
export const external = ["exceljs", "pg-native", "msgpackr-extract"]

/** The fleet's packages: bundled, in chunks loaded by the fleet's commands only (see the header). */
const fleetPackages = ["pg", "ioredis", "bullmq"]

/** The directory of the package that holds `file` (the nearest package.json with a name) and its name. */
const packageOf = (file) => {
  for (let dir = Path.dirname(file); dir !== Path.dirname(dir); dir = Path.dirname(dir)) {
    const json = Path.join(dir, "package.json")
    if (existsSync(json)) {
      const { name } = JSON.parse(readFileSync(json, "utf8"))
      if (typeof name === "string") return { dir, name }
    }
  }
  return undefined
}

/**
 * How Node finds `dir`, the folder of package `name`, from dist/: the names to resolve one from the other, from
 * dist/ (`["ioredis"]`; `["bullmq", "msgpackr"]` for the copy of msgpackr nested in bullmq's node_modules).
 */
const chainTo = (dir, name) => {
  const fromDist = createRequire(Path.join(dist, "bin.js")).resolve.paths(name) ?? []
  const found = fromDist.map((p) => Path.join(p, name)).find((d) => existsSync(Path.join(d, "package.json")))
  if (found !== undefined && realpathSync(found) === realpathSync(dir)) return [name]
  const outer = packageOf(Path.dirname(dir))
  return outer === undefined ? [name] : [...chainTo(outer.dir, outer.name), name]
}

/**
 * A file of the fleet's packages (or of a package nested in theirs) that reads `__dirname` or `__filename` gets them
 * as where that file is in node_modules at run time (an ES module has neither): `var __filename =
 * __fsmPackageFile(["bullmq", "msgpackr"], "dist/node.cjs")` before its text, found through the packages' chain from
 * the chunk as Node finds them (the banner's function below), hoisted or nested. They read them for ioredis's version
 * (sent to the server as CLIENT SETINFO), msgpackr's way to its native half when `require` is missing, bullmq's
 * sandboxed processors (not used); none of it is read when the module loads.
 */
const wherePackagesAre = {
  name: "where-packages-are",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8")
      if (!/\b__(dirname|filename)\b/.test(text)) return undefined
      const pkg = packageOf(args.path)
      if (pkg === undefined) return undefined
      const chain = chainTo(pkg.dir, pkg.name)
      if (!chain.some((name) => fleetPackages.includes(name))) return undefined
      const file = Path.relative(pkg.dir, args.path).split(Path.sep).join("/")
      return {
        contents: `var __filename = __fsmPackageFile(${JSON.stringify(chain)}, ${JSON.stringify(file)}), ` +
          `__dirname = require("node:path").dirname(__filename); ${text}`,
        loader: "js"
      }
    })
  }
}

/** Every `import.meta.url` of a module in src/ becomes the URL of its tsc output, relative to the bundle's file. */
const whereTscPutsIt = {
  name: "where-tsc-puts-it",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      if (!args.path.startsWith(src + Path.sep)) return undefined
      const text = readFileSync(args.path, "utf8")
      if (!text.includes("import.meta.url")) return undefined
      const inDist = "./" + Path.relative(src, args.path).split(Path.sep).join("/").replace(/\.ts$/, ".js")
      return {
        contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(inDist)}, import.meta.url).href`),
        loader: args.path.endsWith(".ts") ? "ts" : "js"
      }
    })
  }
}

// tsc's entry, kept as dist/unbundled.js (same folder, same imports) to run the CLI unbundled when debugging. tsc
// builds incrementally (dist/.tsbuildinfo): when src/bin.ts did not change it writes no new dist/bin.js, which is
// then still the last bundle, and the dist/unbundled.js taken from tsc's entry then is kept.
const tscEntry = readFileSync(Path.join(dist, "bin.js"), "utf8")
if (tscEntry.includes("./Cli.js")) {
  writeFileSync(
    Path.join(dist, "unbundled.js"),
    tscEntry.replace("//# sourceMappingURL=bin.js.map", "//# sourceMappingURL=unbundled.js.map")
  )
  renameSync(Path.join(dist, "bin.js.map"), Path.join(dist, "unbundled.js.map"))
} else if (!existsSync(Path.join(dist, "unbundled.js"))) {
  console.error("bundle: dist/bin.js is not tsc's entry: run tsc -p tsconfig.json first (or remove dist/ and build)")
  process.exit(1)
}

// The chunks of an earlier build, so none is left behind for a file of the package to load.
for (const name of readdirSync(dist)) {
  if (/^bin-.*\.js(\.map)?$/.test(name)) rmSync(Path.join(dist, name))
}

const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: ["src/bin.ts"],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: "dist",
  entryNames: "[name]",
  chunkNames: "bin-[name]-[hash]",
  external,
  // CommonJS packages in the bundle (yauzl, ws…) `require` Node's modules; an ES module has no `require` of its own.
  // And the fleet's packages (pg, ioredis, bullmq) read their own files by `__dirname` (wherePackagesAre), found here.
  banner: {
    js: "import { createRequire as __fsmCreateRequire } from \"node:module\"; " +
      "const require = __fsmCreateRequire(import.meta.url); " +
      "const __fsmPackageFile = (chain, file) => { " +
      "const { existsSync } = require(\"node:fs\"), { join } = require(\"node:path\"); let from = require, dir = \"\"; " +
      "for (const name of chain) { " +
      "const paths = from.resolve.paths(name) ?? []; " +
      "dir = paths.map((p) => join(p, name)).find((d) => existsSync(join(d, \"package.json\"))) ?? join(paths[0] ?? \"\", name); " +
      "from = __fsmCreateRequire(join(dir, \"package.json\")); } " +
      "return join(dir, file); };"
  },
  sourcemap: "linked",
  sourcesContent: false,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  plugins: [whereTscPutsIt, wherePackagesAre]
})

const outputs = Object.keys(result.metafile.outputs)
const misplaced = outputs.filter((o) => Path.dirname(Path.resolve(root, o)) !== dist)
if (misplaced.length > 0) {
  console.error(`bundle: every file must sit directly in dist/ (import.meta.url is rewritten for it): ${misplaced}`)
  process.exit(1)
}
const js = outputs.filter((o) => o.endsWith(".js"))
const bytes = js.reduce((n, o) => n + result.metafile.outputs[o].bytes, 0)
// What every command loads and compiles before it runs: dist/bin.js and the chunks it imports statically, on and on.
const atStart = new Set()
const loadAtStart = (o) => {
  if (atStart.has(o)) return
  atStart.add(o)
  for (const i of result.metafile.outputs[o].imports) {
    if (i.kind === "import-statement" && i.path in result.metafile.outputs) loadAtStart(i.path)
  }
}
loadAtStart(js.find((o) => Path.basename(o) === "bin.js"))
const startBytes = [...atStart].reduce((n, o) => n + result.metafile.outputs[o].bytes, 0)
const mb = (n) => (n / 1024 / 1024).toFixed(1)
console.log(
  `bundle: dist/bin.js and ${js.length - 1} chunks, ${mb(bytes)} MB; ${mb(startBytes)} MB loaded by every command`
)
