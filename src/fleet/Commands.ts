/**
 * The fleet's commands (cli-contract.md, "Fleet"): `fleet init`, `accounts add|list|remove`, `worker`,
 * `submit import`, `status`, `wait`, `fetch`, `cancel`. Every one takes `--fleet URL` (env FSM_FLEET_URL).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Config from "effect/Config"
import { withEnvironment, withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { conflictOptions, fileFormatOptions, mapOption, onboardMapOption } from "../cli/Parsing.js"
import { exportShapeConfig, resourcesArg as exportResourcesArg } from "../export/Commands.js"
import { exportNames } from "../export/Walks.js"
import {
  dryRunOption,
  fileArg,
  modeOption,
  parsingOptions,
  resourceArg,
  verifyOption,
  verifyWaitOption
} from "../import/Commands.js"
import { answerWaitOption, onboardDryRunOption, onboardInputArg, onboardVerifyOption } from "../onboard/Commands.js"
import { importable } from "../Resources.js"

const fleetOption = Options.text("fleet").pipe(
  withEnvironment("FSM_FLEET_URL", Config.string),
  Options.withDescription(
    "The fleet's store: postgres://USER@HOST:PORT/DB or redis://HOST:PORT (env FSM_FLEET_URL)"
  )
)

const jobArg = Args.text({ name: "JOB" }).pipe(Args.withDescription("A job id, as `submit` printed it"))

const accountOption = Options.text("account").pipe(Options.withDescription("The account the job works for"))

export const initConfig = { fleet: fleetOption, json: jsonOption }

const initCommand = Command.make("init", initConfig, later(() => import("./Handlers.js"), (m) => m.handleInit)).pipe(
  Command.withDescription("Create the queue's and the tool's tables in the fleet's PostgreSQL (idempotent)")
)

export const accountsAddConfig = {
  name: Args.text({ name: "NAME" }),
  baseUrl: Options.text("base-url").pipe(Options.withDescription("The account's API address, ending in /v2")),
  credentials: Options.file("credentials").pipe(
    Options.withDescription("JSON file {\"apiKey\": …, \"apiToken\": …} (otherwise env FSM_API_KEY and FSM_API_TOKEN)"),
    Options.optional
  ),
  rate: Options.text("rate").pipe(
    Options.withDescription("The account's own request budget N/WINDOW, within the worker's"),
    Options.optional
  ),
  fleet: fleetOption,
  json: jsonOption
}

const accountsAddCommand = Command.make(
  "add",
  accountsAddConfig,
  later(() => import("./Handlers.js"), (m) => m.handleAccountsAdd)
).pipe(
  Command.withDescription("Add (or replace) an account: its API address and credentials, encrypted at rest")
)

export const accountsListConfig = { fleet: fleetOption, json: jsonOption }

const accountsListCommand = Command.make(
  "list",
  accountsListConfig,
  later(() => import("./Handlers.js"), (m) => m.handleAccountsList)
).pipe(Command.withDescription("List the accounts (never their credentials)"))

export const accountsRemoveConfig = { name: Args.text({ name: "NAME" }), fleet: fleetOption }

const accountsRemoveCommand = Command.make(
  "remove",
  accountsRemoveConfig,
  later(() => import("./Handlers.js"), (m) => m.handleAccountsRemove)
).pipe(Command.withDescription("Remove an account and its credentials"))

export const workerConfig = {
  egressId: Options.text("egress-id").pipe(
    Options.withDescription("The egress address this worker's requests are counted under; one worker per id")
  ),
  sourceAddress: Options.text("source-address").pipe(
    Options.withDescription("Local address the requests leave from (binds outgoing connections)"),
    Options.optional
  ),
  rate: Options.text("rate").pipe(
    withShownDefault("400/60s"),
    withEnvironment("FSM_RATE", Config.string),
    Options.withDescription(
      "The budget of this egress address N/WINDOW, shared by every job and account (env FSM_RATE)"
    )
  ),
  jobs: Options.integer("jobs").pipe(withShownDefault(4), Options.withDescription("Jobs run at once")),
  fleet: fleetOption
}

export const workerCommand = Command.make(
  "worker",
  workerConfig,
  later(() => import("./Handlers.js"), (m) => m.handleWorker)
).pipe(
  Command.withDescription("Run jobs from the fleet's queue until SIGINT/SIGTERM (then hand back what it holds)")
)

export const submitImportConfig = {
  resource: resourceArg,
  file: fileArg,
  account: accountOption,
  mode: modeOption,
  dryRun: dryRunOption,
  verify: verifyOption,
  verifyWait: verifyWaitOption,
  parsing: parsingOptions,
  map: mapOption,
  chunkRows: Options.integer("chunk-rows").pipe(
    withEnvironment("FSM_FLEET_CHUNK_ROWS", Config.integer),
    withShownDefault(10_000),
    Options.withDescription(
      "A CSV file of more rows is split into parts of this many rows that different workers take (env FSM_FLEET_CHUNK_ROWS)"
    )
  ),
  fleet: fleetOption,
  json: jsonOption
}

const submitImportCommand = Command.make(
  "import",
  submitImportConfig,
  later(() => import("./SubmitHandlers.js"), (m) => m.handleSubmitImport)
).pipe(
  Command.withDescription("Validate a file offline, then queue its import for the fleet's workers")
)

export const submitOnboardConfig = {
  input: onboardInputArg,
  account: accountOption,
  dryRun: onboardDryRunOption,
  verify: onboardVerifyOption,
  answerWait: answerWaitOption,
  conflicts: conflictOptions,
  parsing: fileFormatOptions,
  map: onboardMapOption,
  fleet: fleetOption,
  json: jsonOption
}

const submitOnboardCommand = Command.make(
  "onboard",
  submitOnboardConfig,
  later(() => import("./SubmitHandlers.js"), (m) => m.handleSubmitOnboard)
).pipe(
  Command.withDescription("Check a workbook or directory offline, then queue its onboarding for the fleet's workers")
)

export const submitExportConfig = {
  resources: exportResourcesArg,
  account: accountOption,
  ...exportShapeConfig,
  fleet: fleetOption,
  json: jsonOption
}

const submitExportCommand = Command.make(
  "export",
  submitExportConfig,
  later(() => import("./SubmitHandlers.js"), (m) => m.handleSubmitExport)
).pipe(
  Command.withDescription("Check the resource names and dates, then queue an export of the account for the workers")
)

export const statusConfig = {
  job: Args.text({ name: "JOB" }).pipe(Args.optional),
  watch: Options.boolean("watch").pipe(Options.withDescription("Print again every 2 s until the jobs have ended")),
  fleet: fleetOption,
  json: jsonOption
}

export const statusCommand = Command.make(
  "status",
  statusConfig,
  later(() => import("./JobHandlers.js"), (m) => m.handleStatus)
).pipe(Command.withDescription("Where jobs stand: state, rows done, exit code"))

export const waitConfig = { job: jobArg, fleet: fleetOption, json: jsonOption }

export const waitCommand = Command.make(
  "wait",
  waitConfig,
  later(() => import("./JobHandlers.js"), (m) => m.handleWait)
)
  .pipe(Command.withDescription("Wait for a job to end; exits with the job's exit code"))

export const fetchConfig = {
  job: jobArg,
  out: Options.text("out").pipe(Options.withDescription("A new (or empty) directory for the job's run directory")),
  fleet: fleetOption,
  json: jsonOption
}

export const fetchCommand = Command.make(
  "fetch",
  fetchConfig,
  later(() => import("./FetchHandlers.js"), (m) => m.handleFetch)
).pipe(
  Command.withDescription("Write a job's run directory (journal, reports, summary, source) to --out")
)

export const cancelConfig = { job: jobArg, fleet: fleetOption, json: jsonOption }

export const cancelCommand = Command.make(
  "cancel",
  cancelConfig,
  later(() => import("./JobHandlers.js"), (m) => m.handleCancel)
).pipe(Command.withDescription("Cancel a job: a worker running it stops before its next request"))

export const fleetCommand = Command.make("fleet").pipe(
  Command.withDescription("Set up the store that workers and submitters share"),
  Command.withSubcommands([initCommand])
)

export const accountsCommand = Command.make("accounts").pipe(
  Command.withDescription("The accounts the fleet works for"),
  Command.withSubcommands([accountsAddCommand, accountsListCommand, accountsRemoveCommand])
)

export const submitCommand = Command.make("submit").pipe(
  Command.withDescription("Queue work for the fleet's workers; prints the job id"),
  Command.withSubcommands([submitImportCommand, submitOnboardCommand, submitExportCommand])
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const fleetDocs: CommandDocs = {
  fleet: {
    examples: ["fsm-bulk fleet init --fleet postgres://fsm@db.internal/fsm", "fsm-bulk fleet init --json"],
    doc: "docs/fleet.md"
  },
  "fleet init": {
    examples: ["fsm-bulk fleet init --fleet postgres://fsm@db.internal/fsm", "fsm-bulk fleet init --json"],
    doc: "docs/fleet.md"
  },
  accounts: {
    examples: ["fsm-bulk accounts list", "fsm-bulk accounts add acme --base-url https://api.example.com/v2"],
    doc: "docs/fleet.md"
  },
  "accounts add": {
    examples: [
      "fsm-bulk accounts add acme --base-url https://api.example.com/v2",
      "fsm-bulk accounts add acme --base-url https://api.example.com/v2 --credentials acme.json --rate 200/60s"
    ],
    doc: "docs/fleet.md"
  },
  "accounts list": { examples: ["fsm-bulk accounts list", "fsm-bulk accounts list --json"], doc: "docs/fleet.md" },
  "accounts remove": {
    examples: ["fsm-bulk accounts remove acme", "fsm-bulk accounts remove acme --fleet postgres://fsm@db.internal/fsm"],
    doc: "docs/fleet.md"
  },
  worker: {
    examples: [
      "fsm-bulk worker --egress-id host-a",
      "fsm-bulk worker --egress-id host-a-2 --source-address 10.0.0.12 --jobs 8"
    ],
    doc: "docs/fleet.md"
  },
  submit: {
    examples: [
      "fsm-bulk submit import customers customers.csv --account acme",
      "fsm-bulk submit import tasks tasks.csv --account acme --chunk-rows 5000 --json"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/fleet.md"
  },
  "submit import": {
    examples: [
      "fsm-bulk submit import customers customers.csv --account acme",
      "fsm-bulk submit import tasks tasks.csv --account acme --mode update --json"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/fleet.md"
  },
  "submit onboard": {
    examples: [
      "fsm-bulk submit onboard onboarding.xlsx --account acme",
      "fsm-bulk submit onboard templates/ --account acme --dry-run --json"
    ],
    doc: "docs/fleet.md"
  },
  "submit export": {
    examples: [
      "fsm-bulk submit export --account acme",
      "fsm-bulk submit export customers tasks --account acme --excel-br --since 2025-01-01"
    ],
    values: { RESOURCE: exportNames },
    doc: "docs/fleet.md"
  },
  status: {
    examples: ["fsm-bulk status", "fsm-bulk status 42 --watch", "fsm-bulk status --json"],
    doc: "docs/fleet.md"
  },
  wait: { examples: ["fsm-bulk wait 42", "fsm-bulk wait 42 --json"], doc: "docs/fleet.md" },
  fetch: {
    examples: ["fsm-bulk fetch 42 --out runs/job-42", "fsm-bulk fetch 42 --out runs/job-42 --json"],
    doc: "docs/fleet.md"
  },
  cancel: { examples: ["fsm-bulk cancel 42", "fsm-bulk cancel 42 --json"], doc: "docs/fleet.md" }
}
