/**
 * The command tree. Each command lives beside the pipeline it drives and is only listed here, with what its help
 * adds to the parser (examples, the values its arguments complete to, its guide): one block per command.
 * Flags (name, type, choices, default, environment variable, description) are defined once, with the command's
 * options; help, suggestions and completion are read from this tree (src/cli/Help.ts).
 */
import { Args, Command } from "@effect/cli"
import * as Console from "effect/Console"
import { completionScript, shells } from "./cli/Completion.js"
import { connectionOptions } from "./cli/Connection.js"
import { type CliModel, cliModel, type CommandExtras, flagNames } from "./cli/Help.js"
import { fileFormatOptions } from "./cli/Parsing.js"
import { makeDocsCommand } from "./docs/Command.js"
import { evidenceCommand, keysCommand } from "./evidence/Commands.js"
import { exportCommand, verifyCommand } from "./export/Commands.js"
import { exportNames } from "./export/Walks.js"
import {
  accountsCommand,
  cancelCommand,
  fetchCommand,
  fleetCommand,
  statusCommand,
  submitCommand,
  waitCommand,
  workerCommand
} from "./fleet/Commands.js"
import { importCommand, rerunCommand, resumeCommand, validateCommand } from "./import/Commands.js"
import { mapCommand } from "./mapping/Command.js"
import { demoCommand, onboardCommand } from "./onboard/Commands.js"
import { applyCommand, planCommand } from "./plan/Commands.js"
import { reportCommand } from "./report/Command.js"
import { importable } from "./Resources.js"
import { sandboxCommand } from "./sandbox/Command.js"
import { templateCommand } from "./template/Command.js"
import { undoCommand } from "./undo/Command.js"
import { version } from "./Version.js"

const importNames = importable.map((r) => r.name)
const run = "runs/20260101T120000Z-customers"

const completionCommand = Command.make(
  "completion",
  { shell: Args.choice(shells.map((s) => [s, s] as const), { name: "SHELL" }) },
  ({ shell }) => Console.log(completionScript(model(), shell).trimEnd())
).pipe(
  Command.withDescription(
    "Print the shell completion script (commands, flags, choices, resource names) for bash, zsh or fish"
  )
)

/** Per command: 2–4 examples (each must parse: test/cli/help.test.ts), argument values, the guide. */
const extras: Readonly<Record<string, CommandExtras>> = {
  sandbox: {
    examples: [
      "fsm-bulk sandbox",
      "fsm-bulk sandbox --port 0 --data sandbox.json",
      "fsm-bulk sandbox --rate-limit 60/60s --fail-rate 0.05 --latency 200ms"
    ],
    doc: "docs/sandbox.md"
  },
  template: {
    examples: [
      "fsm-bulk template customers tasks",
      "fsm-bulk template --format xlsx --out templates",
      "fsm-bulk template --example"
    ],
    values: { RESOURCE: importNames },
    doc: "docs/importing.md"
  },
  map: {
    examples: [
      "fsm-bulk map customers clientes.csv --out clientes.map.json",
      "fsm-bulk map customers clientes.xlsx --sheet Clientes --values"
    ],
    values: { RESOURCE: importNames },
    doc: "docs/mapping.md"
  },
  validate: {
    examples: [
      "fsm-bulk validate customers customers.csv",
      "fsm-bulk validate tasks tasks.xlsx --sheet Tasks --date-format dd/mm/yyyy"
    ],
    values: { RESOURCE: importNames },
    doc: "docs/importing.md"
  },
  import: {
    examples: [
      "fsm-bulk import customers customers.csv --dry-run",
      "fsm-bulk import customers customers.csv --base-url https://api.example.com/v2 --credentials credentials.json",
      "fsm-bulk import products products.xlsx --mode update --rate 400/60s",
      "fsm-bulk import questionnaire-answers answers.csv --verify --verify-wait 10m"
    ],
    values: { RESOURCE: importNames },
    doc: "docs/importing.md"
  },
  rerun: {
    examples: [
      `fsm-bulk rerun ${run}`,
      `fsm-bulk rerun ${run}/report.csv --fixed corrected.csv`,
      `fsm-bulk rerun ${run} --only failed --dry-run`
    ],
    doc: "docs/runs.md"
  },
  resume: {
    examples: [`fsm-bulk resume ${run}`, `fsm-bulk resume ${run} --rate 200/60s --json`],
    doc: "docs/runs.md"
  },
  plan: {
    examples: ["fsm-bulk plan show clientes.plan.json", "fsm-bulk plan show clientes.plan.json --all"],
    doc: "docs/rehearsal.md"
  },
  "plan show": {
    examples: [
      "fsm-bulk plan show clientes.plan.json",
      "fsm-bulk plan show clientes.plan.json --status conflict,failed --all"
    ],
    doc: "docs/rehearsal.md"
  },
  apply: {
    examples: [
      "fsm-bulk apply clientes.plan.json --approved-by \"Ana Souza\"",
      "fsm-bulk apply clientes.plan.json --approved-by ana --base-url https://api.example.com/v2 --credentials credentials.json"
    ],
    doc: "docs/rehearsal.md"
  },
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
  },
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
      `fsm-bulk verify ${run} --public-key signer.pub`,
      "fsm-bulk verify backup --json"
    ],
    doc: "docs/export.md"
  },
  keys: { examples: ["fsm-bulk keys new", "fsm-bulk keys new --out keys"], doc: "docs/rehearsal.md" },
  "keys new": { examples: ["fsm-bulk keys new", "fsm-bulk keys new --out keys --json"], doc: "docs/rehearsal.md" },
  evidence: {
    examples: [
      `fsm-bulk evidence ${run} --out evidence.zip`,
      `fsm-bulk evidence ${run} --out evidence.zip --with-input`
    ],
    doc: "docs/rehearsal.md"
  },
  report: { examples: [`fsm-bulk report ${run}`, `fsm-bulk report ${run} --json`], doc: "docs/runs.md" },
  undo: {
    examples: [`fsm-bulk undo ${run} --dry-run`, `fsm-bulk undo ${run}`, `fsm-bulk undo ${run} --force --json`],
    doc: "docs/runs.md"
  },
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
    values: { RESOURCE: importNames },
    doc: "docs/fleet.md"
  },
  "submit import": {
    examples: [
      "fsm-bulk submit import customers customers.csv --account acme",
      "fsm-bulk submit import tasks tasks.csv --account acme --mode update --json"
    ],
    values: { RESOURCE: importNames },
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
  cancel: { examples: ["fsm-bulk cancel 42", "fsm-bulk cancel 42 --json"], doc: "docs/fleet.md" },
  docs: {
    examples: [
      "fsm-bulk docs",
      "fsm-bulk docs importing",
      "fsm-bulk docs mapping --path",
      "fsm-bulk docs --man > fsm-bulk.1"
    ]
  },
  completion: {
    examples: [
      "fsm-bulk completion bash > ~/.local/share/bash-completion/completions/fsm-bulk",
      "fsm-bulk completion zsh > ~/.zsh/fsm-bulk.zsh",
      "fsm-bulk completion fish > ~/.config/fish/completions/fsm-bulk.fish"
    ],
    doc: "docs/terminal.md"
  }
}

export const root = Command.make("fsm-bulk").pipe(
  Command.withDescription(
    "Bulk import, export and onboarding for the Field-Service Management API v2, with a local sandbox"
  ),
  Command.withSubcommands([
    sandboxCommand,
    templateCommand,
    mapCommand,
    validateCommand,
    importCommand,
    rerunCommand,
    resumeCommand,
    planCommand,
    applyCommand,
    undoCommand,
    onboardCommand,
    demoCommand,
    exportCommand,
    verifyCommand,
    keysCommand,
    evidenceCommand,
    reportCommand,
    // the fleet: many accounts on many hosts (docs/fleet.md)
    fleetCommand,
    accountsCommand,
    workerCommand,
    submitCommand,
    statusCommand,
    waitCommand,
    fetchCommand,
    cancelCommand,
    completionCommand,
    makeDocsCommand(() => model())
  ])
)

let built: CliModel | undefined

/** The model of the tree that help, suggestions and completion are drawn from. */
export const model = (): CliModel =>
  built ??= cliModel(root, {
    examples: [
      "fsm-bulk template customers",
      "fsm-bulk import customers customers.csv --dry-run",
      "fsm-bulk onboard company.xlsx",
      "fsm-bulk export --out backup"
    ],
    commands: extras,
    groups: [
      { title: "FILE FORMAT FLAGS", names: flagNames(fileFormatOptions) },
      { title: "CONNECTION FLAGS", names: flagNames(connectionOptions) }
    ]
  })

export const cli = Command.run(root, { name: "fsm-bulk", version })
