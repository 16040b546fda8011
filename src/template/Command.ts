/**
 * `fsm-bulk template [RESOURCE...] [--format csv|xlsx] [--out DIR]`: import templates for the named resources
 * (every importable one when none is named), in both formats unless one is chosen. `--workbook` writes one
 * onboarding workbook instead (`--out FILE.xlsx`, or `DIR/onboarding.xlsx`). A file whose bytes would not change
 * is left alone and listed as unchanged.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { withShownDefault } from "../cli/Facts.js"
import { later } from "../cli/Lazy.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { importable } from "../Resources.js"
import { workbookFileName } from "./Names.js"

const resourcesArg = Args.text({ name: "RESOURCE" }).pipe(
  Args.withDescription("Resources to write templates for (default: every importable resource)"),
  Args.repeated
)
const formatOption = Options.choice("format", ["csv", "xlsx"]).pipe(
  Options.withDescription("Write only this format (default: both)"),
  Options.optional
)
const outOption = Options.text("out").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Directory to write into (default: templates); with --workbook, the file or its directory"),
  withShownDefault("templates")
)
const workbookOption = Options.boolean("workbook").pipe(
  Options.withDescription(
    `Write one onboarding workbook instead: a README sheet, then a sheet per resource in dependency order (--out FILE.xlsx, default templates/${workbookFileName})`
  )
)

const profileOption = Options.boolean("profile").pipe(
  Options.withDescription(
    "Write an empty mapping profile per resource instead (DIR/RESOURCE.map.json), to fill by hand (docs/mapping.md)"
  )
)

const exampleOption = Options.boolean("example").pipe(
  Options.withDescription(
    "Write the example onboarding workbook (example-onboarding.xlsx: a small São Paulo HVAC company) into --out instead"
  )
)

export const templateConfig = {
  resources: resourcesArg,
  format: formatOption,
  out: outOption,
  example: exampleOption,
  workbook: workbookOption,
  profile: profileOption,
  json: jsonOption
}

export const templateCommand = Command.make(
  "template",
  templateConfig,
  later(() => import("./Handlers.js"), (m) => m.handleTemplate)
).pipe(Command.withDescription(
  "Write CSV and XLSX import templates (header, notes, drop-downs, one example row), or one onboarding workbook"
))

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const templateDocs: CommandDocs = {
  template: {
    examples: [
      "fsm-bulk template customers tasks",
      "fsm-bulk template --format xlsx --out templates",
      "fsm-bulk template --example"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/importing.md"
  }
}
