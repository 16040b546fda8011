/**
 * The `export` and `verify` commands: flags and arguments, the summary (`--json` or human lines on stderr) and
 * the exit code (export: 0 done, 2 bad usage, 3 aborted or interrupted, the checkpoint kept for a rerun;
 * verify: 0 everything matches, 1 any problem).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { connectionOptions } from "../cli/ConnectionFlags.js"

import { withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import { type CommandDocs, exampleRun } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { UsageError } from "../Errors.js"
import { signOption } from "../evidence/Commands.js"
import type { CsvDialect } from "./Manifest.js"
import { exportNames } from "./Walks.js"

export const resourcesArg = Args.text({ name: "resource" }).pipe(
  Args.withDescription(`Resources to export (default: all of them): ${exportNames.join(", ")}`),
  Args.repeated
)

const outOption = Options.text("out").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Directory of the export (created if needed; an interrupted export in it is continued)")
)

export const formatOption = Options.choice("format", ["csv", "xlsx"]).pipe(
  withShownDefault("csv" as const),
  Options.withDescription(
    "csv (UTF-8 with BOM, can be continued from its last page) or xlsx (one workbook per resource)"
  )
)

const delimiterOption = Options.choice("delimiter", [",", ";", "tab"]).pipe(
  Options.withDescription("CSV delimiter: , (default), ; (Excel in Brazil) or tab"),
  Options.optional
)

const decimalOption = Options.choice("decimal", [".", ","]).pipe(
  Options.withDescription("Decimal mark of CSV number cells: . (default) or , (Excel in Brazil)"),
  Options.optional
)

const excelBrOption = Options.boolean("excel-br").pipe(
  Options.withDescription("CSV for Excel in Brazil, opened right by a double-click: --delimiter ; --decimal ,")
)

/** The CSV dialect the flags ask for; refused with --format xlsx, or beside --excel-br. */
export const csvDialect = (args: {
  readonly format: "csv" | "xlsx"
  readonly delimiter: Option.Option<"," | ";" | "tab">
  readonly decimal: Option.Option<"." | ",">
  readonly excelBr: boolean
}): Effect.Effect<CsvDialect | undefined, UsageError> => {
  const given = [
    ...Option.toArray(Option.map(args.delimiter, (d) => `--delimiter ${d}`)),
    ...Option.toArray(Option.map(args.decimal, (d) => `--decimal ${d}`))
  ]
  if (args.format === "xlsx" && (given.length > 0 || args.excelBr)) {
    return Effect.fail(
      new UsageError({
        message: `${
          [...given, ...(args.excelBr ? ["--excel-br"] : [])].join(", ")
        } only apply to CSV: an .xlsx export holds number cells`
      })
    )
  }
  if (args.excelBr && given.length > 0) {
    return Effect.fail(
      new UsageError({ message: `--excel-br already means --delimiter ; --decimal ,: leave out ${given.join(", ")}` })
    )
  }
  if (args.excelBr) return Effect.succeed({ delimiter: ";", decimal: "," })
  if (given.length === 0) return Effect.succeed(undefined)
  return Effect.succeed({
    delimiter: Option.match(args.delimiter, { onNone: () => ",", onSome: (d) => (d === "tab" ? "\t" : d) }),
    decimal: Option.getOrElse(args.decimal, () => ".")
  })
}

const sinceOption = Options.text("since").pipe(
  Options.withPseudoName("DATE"),
  Options.withDescription(
    "First day (yyyy-mm-dd) of the date-windowed lists: tasks, deleted tasks, expenses, tickets (default 2000-01-01)"
  ),
  Options.optional
)

const untilOption = Options.text("until").pipe(
  Options.withPseudoName("DATE"),
  Options.withDescription("Last day (yyyy-mm-dd) of the date-windowed lists (default: two years from today)"),
  Options.optional
)

const redactOption = Options.text("redact").pipe(
  Options.withDescription(
    "Replace personal data with consistent fakes: pii (names of people, e-mails, phones, CPF/CNPJ, addresses) or RESOURCE.FIELD,… (needs --redact-key)"
  ),
  Options.optional
)

const redactKeyOption = Options.text("redact-key").pipe(
  Options.withDescription(
    "File holding the secret key the fakes are derived with (created, mode 0600, when absent); the same key gives the same fakes"
  ),
  Options.optional
)

/** What an export writes and of which time: the same flags for `export` and the fleet's `submit export`. */
export const exportShapeConfig = {
  format: formatOption,
  delimiter: delimiterOption,
  decimal: decimalOption,
  excelBr: excelBrOption,
  since: sinceOption,
  until: untilOption
}

export const exportConfig = {
  resources: resourcesArg,
  out: outOption,
  ...exportShapeConfig,
  sign: signOption,
  redact: redactOption,
  redactKey: redactKeyOption,
  json: jsonOption,
  connection: connectionOptions
}

export const exportCommand = Command.make(
  "export",
  exportConfig,
  later(() => import("./Handlers.js"), (m) => m.handleExport)
).pipe(
  Command.withDescription(
    "Export everything the account holds (or the resources named) into the --out directory: one import-ready file per resource, and manifest.json written last"
  )
)

export const verifyConfig = {
  dir: Args.text({ name: "DIR" }).pipe(
    Args.withDescription("The --out directory of an export, or a run directory (import, onboard, rerun, undo)")
  ),
  publicKey: Options.text("public-key").pipe(
    Options.withPseudoName("PUB"),
    Options.withDescription("Accept only a signature by this key (the signer's .pub file); an unsigned one fails"),
    Options.optional
  ),
  json: jsonOption
}

export const verifyCommand = Command.make(
  "verify",
  verifyConfig,
  later(() => import("./Handlers.js"), (m) => m.handleVerify)
).pipe(
  Command.withDescription(
    "Check an export (every checksum and row count against manifest.json) or a run directory (the journal's hash chain), and their signatures (exit 1 on any problem)"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const exportDocs: CommandDocs = {
  export: {
    examples: [
      "fsm-bulk export --out backup",
      "fsm-bulk export customers tasks --out backup --format xlsx --since 2025-01-01"
    ],
    values: { RESOURCE: exportNames },
    doc: "docs/export.md"
  },
  verify: {
    examples: [
      "fsm-bulk verify backup",
      `fsm-bulk verify ${exampleRun} --public-key signer.pub`,
      "fsm-bulk verify backup --json"
    ],
    doc: "docs/export.md"
  }
}
