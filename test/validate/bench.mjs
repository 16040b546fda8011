/**
 * Validation benchmark (a script, not a test): a CSV of customers in pt-BR (decimal commas, punctuated CNPJs,
 * sim/não, list cells, references), parsed by csv-parse alone, then parsed and validated. The goal is that
 * validating costs at most as much again as parsing (total ≤ 2× the bare parse).
 *
 *   npm run build && node test/validate/bench.mjs [rows=1000000]
 */
import { parse } from "csv-parse"
import { Effect, Stream } from "effect"
import { createReadStream, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { resource } from "../../dist/Resources.js"
import { inferFormats, makeValidator, planColumns } from "../../dist/validate/Validate.js"
import { validationColumns, validationCsv } from "../bench/data.mjs"

const rows = Number(process.argv[2] ?? 1_000_000)
const header = validationColumns
const dir = mkdtempSync(join(tmpdir(), "fsm-bench-"))
const file = join(dir, "customers.csv")
await validationCsv(rows, file)

/** Every record of the file through csv-parse, each handed to `visit`. */
const parseFile = (visit) =>
  new Promise((resolve, reject) => {
    const parser = createReadStream(file).pipe(parse({ from_line: 2, relax_column_count: true }))
    let n = 0
    parser.on("data", (cells) => visit({ row: (n++) + 2, cells }))
    parser.on("end", () => resolve(n))
    parser.on("error", reject)
  })

/** The best of three runs: the machine is shared, and the first run also warms the JIT. */
const time = async (label, run) => {
  let best = Infinity
  let result
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.()
    const started = performance.now()
    result = await run()
    best = Math.min(best, performance.now() - started)
  }
  console.log(`${label.padEnd(40)} ${best.toFixed(0).padStart(7)} ms`)
  return { ms: best, result }
}

const options = {
  dateFormat: "auto",
  decimal: "auto",
  mode: "upsert",
  baseDir: dir,
  maxAttachmentBytes: 10 * 1024 * 1024,
  restoreGuard: false
}
const plan = Effect.runSync(planColumns(resource("customers"), file, header, options))

console.log(`${rows} rows, ${header.length} columns`)
const bare = await time("csv-parse alone", () => parseFile(() => {}))

/** The file's records as the readers hand them over: a Stream of SourceRows. */
const rowStream = () => {
  let n = 0
  return Stream.fromAsyncIterable(
    createReadStream(file).pipe(parse({ from_line: 2, relax_column_count: true })),
    (e) => e
  ).pipe(
    Stream.map((cells) => ({ row: (n++) + 2, cells }))
  )
}
const streamed = await time("csv-parse as a Stream", () => Effect.runPromise(Stream.runDrain(rowStream())))
const formats = await time(
  "csv-parse as a Stream + inferFormats",
  () => Effect.runPromise(inferFormats(plan, rowStream(), options))
)

let validRows = 0
const validated = await time("csv-parse + validate", () => {
  // A fresh validator per run: it remembers every key it has seen.
  const validator = makeValidator(plan, formats.result, options)
  validRows = 0
  return parseFile((r) => {
    const result = Effect.runSync(validator.validate(r))
    if (result._tag === "Valid") validRows++
  })
})
// Duplicate keys are none; every row must be valid or the benchmark measures the error path.
if (validRows !== rows) throw new Error(`expected ${rows} valid rows, got ${validRows}`)
console.log(`inferFormats pass / Stream parse: ${(formats.ms / streamed.ms).toFixed(2)}×`)
console.log(`parse + validate / bare parse: ${(validated.ms / bare.ms).toFixed(2)}× (goal ≤ 2×)`)
rmSync(dir, { recursive: true, force: true })
