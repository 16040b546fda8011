/**
 * How many times the CLI reads its source: each command runs under `strace -f -y -e trace=read,pread64` (every
 * thread, each descriptor shown with the path it is open on), the bytes returned by reads of the source's
 * descriptors are summed and divided by the file's size. 1.0 is one pass over the file; a bounded sniff of its
 * first bytes adds a little.
 *
 *   node test/bench/passes.mjs [ROWS] [DIST]
 *
 * Generates (once) a ROWS-row customers CSV and XLSX (default 2,000) in test/bench/data/ and prints, for
 * `validate` and `import --dry-run` (embedded sandbox) on each, the ratio, the bytes and the exit code. DIST is
 * the built CLI to measure (default: this checkout's dist/bin.js), so a build of another commit can be compared.
 * Needs strace (Debian/Ubuntu: `apt-get install strace`); it is a measuring tool, not a test.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { customersCsv, customersXlsx, importColumns } from "./data.mjs"
import { bin } from "./measure.mjs"
import { bytesReadFrom } from "./strace.mjs"

const rows = Number(process.argv[2] ?? 2000)
const cli = resolve(process.argv[3] ?? bin)

if (spawnSync("strace", ["-V"]).error !== undefined) {
  console.error("passes: strace is not installed (apt-get install strace)")
  process.exit(2)
}

const measure = (label, file, args) => {
  const work = mkdtempSync(join(tmpdir(), "fsm-passes-"))
  try {
    const trace = join(work, "strace.txt")
    const run = spawnSync(
      "strace",
      ["-f", "-y", "-s", "0", "-e", "trace=read,pread64", "-o", trace, process.execPath, cli, ...args(work)],
      { encoding: "utf8", env: { PATH: process.env.PATH ?? "" }, maxBuffer: 64 * 1024 * 1024 }
    )
    const path = realpathSync(file)
    const size = statSync(path).size
    const bytes = bytesReadFrom(readFileSync(trace, "utf8"), path)
    return { command: label, ratio: Math.round((bytes / size) * 100) / 100, bytes, size, exitCode: run.status }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const csv = (await customersCsv(rows, importColumns, `customers-import-${rows}.csv`)).path
const xlsx = (await customersXlsx(rows, importColumns)).path
const results = []
for (const [format, file] of [["csv", csv], ["xlsx", xlsx]]) {
  results.push({
    format,
    ...measure("validate", file, (work) => ["validate", "customers", file, "--out", join(work, "run")])
  })
  results.push({
    format,
    ...measure("import --dry-run", file, (work) => [
      "import",
      "customers",
      file,
      "--dry-run",
      "--out",
      join(work, "run")
    ])
  })
}
console.table(results)
