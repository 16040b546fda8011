/**
 * The yardstick of offline validation: one bare csv-parse pass over a file (its records counted, nothing else),
 * with the reader's own parse options. Run as a child process: `node csv-parse-pass.mjs FILE`; prints
 * `{"records": n}`.
 */
import { parse } from "csv-parse"
import { createReadStream } from "node:fs"

const file = process.argv[2]
let records = 0
const parser = createReadStream(file, { highWaterMark: 64 * 1024 }).pipe(
  parse({ delimiter: ",", bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false })
)
for await (const _ of parser) records++
console.log(JSON.stringify({ records }))
