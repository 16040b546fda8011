/**
 * `fsm-bulk template --example [--out DIR]`: writes the example onboarding workbook (`example-onboarding.xlsx`)
 * into DIR from the CSVs of `templates/example/`, attachment paths relative to DIR. The `template` command only
 * wires the flag; this module owns what it does.
 */
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { say, summary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { exampleDir, writeExampleWorkbook } from "./Example.js"

const exampleFileName = "example-onboarding.xlsx"

export const writeExampleTemplate = Effect.fn("TemplateExample.write")(function*(options: {
  readonly out: string
  readonly json: boolean
  /** Resources or a format given with --example: refused, the example is one workbook of its own. */
  readonly conflicting: ReadonlyArray<string>
}) {
  if (options.conflicting.length > 0) {
    return yield* new UsageError({
      message: `--example writes the example workbook only: leave out ${options.conflicting.join(", ")}`
    })
  }
  const file = Path.join(options.out, exampleFileName)
  const sheets = yield* writeExampleWorkbook(file, exampleDir)
  const rows = sheets.reduce((n, s) => n + s.rows.length, 0)
  if (!options.json) yield* say(`wrote ${file}`)
  yield* summary(options.json, {
    command: "template",
    example: true,
    out: options.out,
    files: [file],
    sheets: sheets.map((s) => ({ name: s.resource, rows: s.rows.length })),
    exitCode: 0
  }, [
    `example onboarding workbook: ${sheets.length} sheets, ${rows} rows in ${file} (from ${exampleDir})`
  ])
})
