/**
 * The commands and flags of evidence: `keys new`, `--sign KEY` (export and every command that writes a run
 * directory), `verify`'s run-directory half and `--public-key`, and `evidence RUN_DIR --out FILE.zip`.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { later } from "../cli/Lazy.js"
import { type CommandDocs, exampleRun } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { defaultKeyDir } from "./Keys.js"

export const signOption = Options.text("sign").pipe(
  Options.withPseudoName("KEY"),
  Options.withDescription(
    "Sign what the command writes with this Ed25519 private key (fsm-bulk keys new); verify checks it"
  ),
  Options.optional
)
export const keysNewConfig = {
  out: Options.text("out").pipe(
    Options.withPseudoName("DIR"),
    Options.withDescription(`Directory of the pair (default: ${defaultKeyDir()})`),
    Options.optional
  ),
  json: jsonOption
}

const keysNewCommand = Command.make(
  "new",
  keysNewConfig,
  later(() => import("./Handlers.js"), (m) => m.handleKeysNew)
).pipe(Command.withDescription("Make an Ed25519 key pair that exports and runs are signed with"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Signing keys: keys new"),
  Command.withSubcommands([keysNewCommand])
)

export const evidenceConfig = {
  runDir: Args.text({ name: "RUN_DIR" }).pipe(Args.withDescription("The run directory to bundle")),
  out: Options.text("out").pipe(Options.withPseudoName("FILE.zip"), Options.withDescription("The bundle to write")),
  withInput: Options.boolean("with-input").pipe(
    Options.withDescription(
      "Put the input file itself in the bundle (it holds customer data; by default only its sha256 is)"
    )
  ),
  publicKey: Options.text("public-key").pipe(
    Options.withPseudoName("PUB"),
    Options.withDescription("The signer's public key, put in the bundle (default: the one in summary.sig)"),
    Options.optional
  ),
  json: jsonOption
}

export const evidenceCommand = Command.make(
  "evidence",
  evidenceConfig,
  later(() => import("./Handlers.js"), (m) => m.handleEvidence)
).pipe(
  Command.withDescription(
    "Bundle a run's evidence for an auditor into a zip: input's sha256, profile, plan, journal, reports, summary, signature, index"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const evidenceDocs: CommandDocs = {
  keys: { examples: ["fsm-bulk keys new", "fsm-bulk keys new --out keys"], doc: "docs/rehearsal.md" },
  "keys new": { examples: ["fsm-bulk keys new", "fsm-bulk keys new --out keys --json"], doc: "docs/rehearsal.md" },
  evidence: {
    examples: [
      `fsm-bulk evidence ${exampleRun} --out evidence.zip`,
      `fsm-bulk evidence ${exampleRun} --out evidence.zip --with-input`
    ],
    doc: "docs/rehearsal.md"
  }
}
