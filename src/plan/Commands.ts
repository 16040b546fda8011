/**
 * `fsm-bulk plan show PLAN` (a plan printed for sign-off: what it is bound to, counts, each row's changes) and
 * `fsm-bulk apply PLAN` (an import that sends exactly the plan: see `import/Plan.ts` for the per-row rule).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { connectionOptions, forceBaseUrlOption } from "../cli/ConnectionFlags.js"

import { withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { outOption } from "../import/Commands.js"

const planArg = Args.text({ name: "PLAN" }).pipe(
  Args.withDescription("A plan written by `import … --dry-run --plan PLAN` or `onboard … --dry-run --plan PLAN`")
)

export const showConfig = {
  plan: planArg,
  all: Options.boolean("all").pipe(Options.withDescription("List every row (default: the first --limit)")),
  limit: Options.integer("limit").pipe(
    Options.withPseudoName("N"),
    Options.withDescription("How many rows to list"),
    withShownDefault(50)
  ),
  status: Options.text("status").pipe(
    Options.withPseudoName("STATUSES"),
    Options.withDescription("Only rows with these statuses, comma-separated (default: the rows that send a write)"),
    Options.optional
  ),
  json: jsonOption
}

const showCommand = Command.make(
  "show",
  showConfig,
  later(() => import("./Handlers.js"), (m) => m.handleShow)
).pipe(Command.withDescription("Print a plan for sign-off: its input, profile and target, counts, each row's changes"))

export const planCommand = Command.make("plan").pipe(
  Command.withDescription("Plans a dry run wrote, for sign-off before `apply`: `plan show PLAN`"),
  Command.withSubcommands([showCommand])
)

export const applyConfig = {
  plan: planArg,
  approvedBy: Options.text("approved-by").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription("Who approved the plan: recorded in the journal, the summary and the reports"),
    Options.optional
  ),
  out: outOption,
  json: jsonOption,
  publicKey: Options.text("public-key").pipe(
    Options.withPseudoName("PUB"),
    Options.withDescription(
      "Apply the plan only if PLAN.sig is a good signature of it by this Ed25519 public key (`--sign` on the dry run)"
    ),
    Options.optional
  ),
  forceBaseUrl: forceBaseUrlOption,
  connection: connectionOptions
}

export const applyCommand = Command.make(
  "apply",
  applyConfig,
  later(() => import("./Handlers.js"), (m) => m.handleApply)
).pipe(
  Command.withDescription(
    "Send exactly an approved plan: a row whose record changed since the plan is `conflict` (not sent); a changed input is refused"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const planDocs: CommandDocs = {
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
  }
}
