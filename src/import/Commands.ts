/**
 * The commands of the import pipeline: `validate`, `import`, `rerun` and `resume`, as the command tree has them (flags
 * per cli-contract.md, help's examples). What they run is in Handlers.ts, loaded when one of them runs (cli/Lazy.ts).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { namesOf, resourceNamed } from "../Aliases.js"
import { connectionOptions, forceBaseUrlOption } from "../cli/ConnectionFlags.js"

import { withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import { type CommandDocs, exampleRun } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import {
  attachmentsRootOption,
  conflictOptions,
  fileFormatOptions,
  mapOption,
  sendWriteOnlyOption
} from "../cli/Parsing.js"
import { UsageError } from "../Errors.js"
import { signOption } from "../evidence/Commands.js"
import { importable, resource as resourceOf } from "../Resources.js"
import { didYouMean } from "../Words.js"

// --- arguments and flags -----------------------------------------------------------------------------------------

export const resourceArg = Args.text({ name: "RESOURCE" }).pipe(
  Args.withDescription(`What the file holds: ${importable.map((r) => r.name).join(", ")}`)
)
export const fileArg = Args.text({ name: "FILE" }).pipe(Args.withDescription("The CSV or XLSX file to read"))

export const parsingOptions = Options.all({
  sheet: Options.text("sheet").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription("XLSX sheet to read (default: the one named after the resource, else the first)"),
    Options.optional
  ),
  formats: fileFormatOptions
}).pipe(Options.map(({ sheet, formats }) => ({ sheet, ...formats })))

export const modeOption = Options.choice("mode", ["upsert", "create", "update", "delete"]).pipe(
  withShownDefault("upsert" as const),
  Options.withDescription(
    "upsert (create or update by key), create (POST), update (JSON Patch of the filled cells), delete"
  )
)
export const dryRunOption = Options.boolean("dry-run").pipe(
  Options.withDescription("Compare with the server and report what would change; write nothing")
)
export const verifyOption = Options.boolean("verify").pipe(
  Options.withDescription(
    "Wait for rows the API only queued (202: questionnaire answers) to show on the server: confirmed or unconfirmed"
  )
)
export const verifyWaitOption = Options.text("verify-wait").pipe(
  Options.withPseudoName("DURATION"),
  withShownDefault("6m"),
  Options.withDescription("With --verify: how long to wait for queued rows to show (the API promises 5 minutes)")
)

export const outOption = Options.text("out").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Run directory (default runs/<UTC timestamp>-<resource>)"),
  Options.optional
)

export const resourceName = (name: string) =>
  Effect.suspend(() => {
    // English or Portuguese (`clientes`), src/Aliases.ts.
    const named = resourceNamed(name)
    if (named !== undefined && resourceOf(named).kind !== "readonly") return Effect.succeed(named)
    return Effect.fail(
      new UsageError({
        message: `unknown resource "${name}"${didYouMean(name, importable.flatMap((r) => namesOf(r.name)))}: one of ${
          importable.map((r) => r.name).join(", ")
        }`
      })
    )
  })

export const validateConfig = {
  resource: resourceArg,
  file: fileArg,
  parsing: parsingOptions,
  map: mapOption,
  mode: modeOption,
  attachmentsRoot: attachmentsRootOption,
  out: outOption,
  json: jsonOption
}

export const validateCommand = Command.make(
  "validate",
  validateConfig,
  later(() => import("./Handlers.js"), (m) => m.handleValidate)
).pipe(
  Command.withDescription(
    "Check a file offline (nothing is sent) and write the same report as an import; valid rows are reported as `valid`"
  )
)

export const importConfig = {
  resource: resourceArg,
  file: fileArg,
  mode: modeOption,
  dryRun: dryRunOption,
  verify: verifyOption,
  verifyWait: verifyWaitOption,
  sendWriteOnly: sendWriteOnlyOption,
  conflicts: conflictOptions,
  parsing: parsingOptions,
  map: mapOption,
  attachmentsRoot: attachmentsRootOption,
  out: outOption,
  sign: signOption,
  plan: Options.text("plan").pipe(
    Options.withPseudoName("PLAN"),
    Options.withDescription(
      "With --dry-run: write the plan (each row's action, the record as read, the changes) for `plan show` and `apply`"
    ),
    Options.optional
  ),
  json: jsonOption,
  connection: connectionOptions
}

export const importCommand = Command.make(
  "import",
  importConfig,
  later(() => import("./Handlers.js"), (m) => m.handleImport)
).pipe(
  Command.withDescription(
    "Import a CSV or XLSX file into one resource; writes a run directory with a journal and reports"
  )
)

export const resumeConfig = {
  runDir: Args.text({ name: "RUN_DIR" }).pipe(
    Args.withDescription("The run directory to continue: an import's, or an onboarding's")
  ),
  sign: signOption,
  json: jsonOption,
  forceBaseUrl: forceBaseUrlOption,
  connection: connectionOptions
}

export const resumeCommand = Command.make(
  "resume",
  resumeConfig,
  later(() => import("./Handlers.js"), (m) => m.handleResume)
).pipe(
  Command.withDescription(
    "Finish an interrupted run or onboarding: rows done are not sent again, rows in flight are looked up before any resend"
  )
)

export const rerunConfig = {
  target: Args.text({ name: "REPORT|RUN_DIR" }).pipe(
    Args.withDescription("A report (report.csv or report.xlsx) or a run directory")
  ),
  only: Options.text("only").pipe(
    Options.withPseudoName("STATUSES"),
    Options.withDescription(
      "Statuses to rerun, comma-separated (default failed,in-doubt; with --fixed also invalid)"
    ),
    Options.optional
  ),
  fixed: Options.text("fixed").pipe(
    Options.withPseudoName("FILE"),
    Options.withDescription(
      "Corrections: a file in the import format, rows matched by _row, else by key; their non-empty cells replace the report's (#clear empties one)"
    ),
    Options.optional
  ),
  dryRun: dryRunOption,
  conflicts: conflictOptions,
  attachmentsRoot: attachmentsRootOption,
  out: outOption,
  sign: signOption,
  json: jsonOption,
  forceBaseUrl: forceBaseUrlOption,
  connection: connectionOptions
}

export const rerunCommand = Command.make(
  "rerun",
  rerunConfig,
  later(() => import("./Handlers.js"), (m) => m.handleRerun)
).pipe(
  Command.withDescription(
    "Run again the rows of a report with the chosen statuses, into a new run directory that names its parent"
  )
)

export const importDocs: CommandDocs = {
  validate: {
    examples: [
      "fsm-bulk validate customers customers.csv",
      "fsm-bulk validate tasks tasks.xlsx --sheet Tasks --date-format dd/mm/yyyy"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/importing.md"
  },
  import: {
    examples: [
      "fsm-bulk import customers customers.csv --dry-run",
      "fsm-bulk import customers customers.csv --base-url https://api.example.com/v2 --credentials credentials.json",
      "fsm-bulk import products products.xlsx --mode update --rate 400/60s",
      "fsm-bulk import questionnaire-answers answers.csv --verify --verify-wait 10m"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/importing.md"
  },
  rerun: {
    examples: [
      `fsm-bulk rerun ${exampleRun}`,
      `fsm-bulk rerun ${exampleRun}/report.csv --fixed corrected.csv`,
      `fsm-bulk rerun ${exampleRun} --only failed --dry-run`
    ],
    doc: "docs/runs.md"
  },
  resume: {
    examples: [`fsm-bulk resume ${exampleRun}`, `fsm-bulk resume ${exampleRun} --rate 200/60s --json`],
    doc: "docs/runs.md"
  }
}
