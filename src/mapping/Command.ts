/**
 * `fsm-bulk map RESOURCE FILE [--sheet S] [--out PROFILE] [--values]`: proposes a mapping profile for a customer's
 * own file and prints it as a table to check in one screen (stdout); `--out` writes the profile, to be reviewed,
 * kept beside the customer's files and given to `validate`/`import` with `--map`. Nothing is sent.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { later } from "../cli/Lazy.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { fileFormatOptions } from "../cli/Parsing.js"
import { importable } from "../Resources.js"

const resourceArg = Args.text({ name: "RESOURCE" }).pipe(
  Args.withDescription(`What the file holds: ${importable.map((r) => r.name).join(", ")}`)
)
const fileArg = Args.text({ name: "FILE" }).pipe(Args.withDescription("The customer's CSV or XLSX file"))

export const mapConfig = {
  resource: resourceArg,
  file: fileArg,
  sheet: Options.text("sheet").pipe(
    Options.withPseudoName("NAME"),
    Options.withDescription("XLSX sheet to read (default: the one named after the resource, else the first)"),
    Options.optional
  ),
  out: Options.text("out").pipe(
    Options.withPseudoName("PROFILE"),
    Options.withDescription("Write the proposed profile here (JSON); without it, the profile is printed"),
    Options.optional
  ),
  values: Options.boolean("values").pipe(
    Options.withDescription("List the distinct values of yes/no, choice and reference columns, with counts")
  ),
  formats: fileFormatOptions,
  json: jsonOption
}

export const mapCommand = Command.make(
  "map",
  mapConfig,
  later(() => import("./Handlers.js"), (m) => m.handleMap)
).pipe(
  Command.withDescription(
    "Propose a mapping profile for a customer's own file (columns → fields, why, how sure, samples); nothing is sent"
  )
)

/** Help's examples (each must parse: test/cli/help-model.test.ts), argument values and guide, per command. */
export const mapDocs: CommandDocs = {
  map: {
    examples: [
      "fsm-bulk map customers clientes.csv --out clientes.map.json",
      "fsm-bulk map customers clientes.xlsx --sheet Clientes --values"
    ],
    values: { RESOURCE: importable.map((r) => r.name) },
    doc: "docs/mapping.md"
  }
}
