/**
 * The `onboard` and `demo` commands (cli-contract.md): flags and arguments, the plan and the closing table on
 * stderr, the summary (`--json`: the last stdout line) and the exit code (0 every row of every step ended well,
 * 1 some did not, 2 bad input and nothing sent, 3 stopped or aborted).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Either from "effect/Either"
import { connectionOptions } from "../cli/ConnectionFlags.js"

import { withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import {
  attachmentsRootOption,
  conflictOptions,
  fileFormatOptions,
  onboardMapOption,
  sendWriteOnlyOption
} from "../cli/Parsing.js"
import { UsageError } from "../Errors.js"
import { signOption } from "../evidence/Commands.js"
import { parseDuration } from "../Units.js"

export const duration = (flag: string, text: string) =>
  Either.mapLeft(parseDuration(text), (why) => new UsageError({ message: `${flag}: ${why}` }))

/** Between two reads of the tasks while answers are awaited: a thirtieth of the wait, between 1 and 10 seconds. */
export const pollFor = (waitMs: number) => Math.min(10_000, Math.max(1_000, Math.round(waitMs / 30)))

const parsingOptions = fileFormatOptions

/** What `onboard` and `submit onboard` take: a workbook or a directory of templates. */
export const onboardInputArg = Args.text({ name: "WORKBOOK.xlsx|DIR" }).pipe(
  Args.withDescription(
    "A workbook with one sheet per resource, or a directory with one <resource>.csv or .xlsx per resource"
  )
)

export const onboardDryRunOption = Options.boolean("dry-run").pipe(
  Options.withDescription("Show the whole plan, step by step, as the statuses the rows would get; write nothing")
)

export const onboardVerifyOption = Options.boolean("verify").pipe(
  Options.withDescription(
    "Wait until each questionnaire answer shows on its task: confirmed, or unconfirmed when --verify-wait ends"
  )
)

/** The same flag and default as `import --verify-wait`; `--answer-wait`, its former name, still works. */
export const answerWaitOption = Options.text("verify-wait").pipe(
  Options.withAlias("answer-wait"),
  Options.withPseudoName("DURATION"),
  withShownDefault("6m"),
  Options.withDescription(
    "With --verify: how long to wait for questionnaire answers to show on their tasks, confirmed, else unconfirmed (the API promises 5 minutes; alias --answer-wait)"
  )
)

export const onboardConfig = {
  input: onboardInputArg,
  dryRun: onboardDryRunOption,
  verify: onboardVerifyOption,
  answerWait: answerWaitOption,
  sendWriteOnly: sendWriteOnlyOption,
  conflicts: conflictOptions,
  answerDelay: Options.text("answer-delay").pipe(
    Options.withPseudoName("DURATION"),
    Options.withDescription(
      "Without --base-url: how long the embedded sandbox takes to show an answer on its task (default 5m, as the API)"
    ),
    Options.optional
  ),
  parsing: parsingOptions,
  map: onboardMapOption,
  attachmentsRoot: attachmentsRootOption,
  out: Options.text("out").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription("Run directory (default runs/<UTC timestamp>-onboard)"),
    Options.optional
  ),
  plan: Options.text("plan").pipe(
    Options.withPseudoName("PLAN"),
    Options.withDescription(
      "With --dry-run: write the onboarding's plan (each step's rows, what they would send) for `plan show` and `apply`"
    ),
    Options.optional
  ),
  sign: signOption,
  json: jsonOption,
  connection: connectionOptions
}

export const onboardCommand = Command.make(
  "onboard",
  onboardConfig,
  later(() => import("./Handlers.js"), (m) => m.handleOnboard)
).pipe(
  Command.withDescription(
    "Onboard a whole account from one workbook or directory: one import per resource in dependency order, references by key resolved across steps"
  )
)

export const demoConfig = {
  out: Options.text("out").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription("Run directory (default runs/<UTC timestamp>-demo)"),
    Options.optional
  ),
  answerDelay: Options.text("answer-delay").pipe(
    Options.withPseudoName("DURATION"),
    withShownDefault("2s"),
    Options.withDescription("How long the embedded sandbox takes to show a questionnaire answer on its task")
  ),
  answerWait: answerWaitOption,
  json: jsonOption,
  connection: connectionOptions
}

export const demoCommand = Command.make(
  "demo",
  demoConfig,
  later(() => import("./Handlers.js"), (m) => m.handleDemo)
).pipe(
  Command.withDescription(
    "Onboard the example company (templates/example-onboarding.xlsx) into the embedded sandbox, export it, verify the export"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const onboardDocs: CommandDocs = {
  onboard: {
    examples: [
      "fsm-bulk onboard company.xlsx --dry-run",
      "fsm-bulk onboard company/ --verify --base-url https://api.example.com/v2 --credentials credentials.json"
    ],
    doc: "docs/onboarding.md"
  },
  demo: {
    examples: ["fsm-bulk demo", "fsm-bulk demo --out runs/demo --answer-delay 1s"],
    doc: "docs/onboarding.md"
  }
}
