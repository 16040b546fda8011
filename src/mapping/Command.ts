/**
 * `fsm-bulk map RESOURCE FILE [--sheet S] [--out PROFILE] [--values]`: proposes a mapping profile for a customer's
 * own file and prints it as a table to check in one screen (stdout); `--out` writes the profile, to be reviewed,
 * kept beside the customer's files and given to `validate`/`import` with `--map`. Nothing is sent.
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "node:path"
import { namesOf, resourceNamed } from "../Aliases.js"
import type { CommandDocs } from "../cli/Model.js"
import { jsonOption } from "../cli/Output.js"
import { fileFormatOptions } from "../cli/Parsing.js"
import { say } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { openSource } from "../files/Read.js"
import { writeFileAtomic } from "../files/Write.js"
import { t } from "../Messages.js"
import { importable, resource as resourceOf } from "../Resources.js"
import { didYouMean } from "../Words.js"
import { schemaRef } from "./Profile.js"
import { distinctValues, proposalTable, propose, sampleOf } from "./Propose.js"

const resourceArg = Args.text({ name: "RESOURCE" }).pipe(
  Args.withDescription(`What the file holds: ${importable.map((r) => r.name).join(", ")}`)
)
const fileArg = Args.text({ name: "FILE" }).pipe(Args.withDescription("The customer's CSV or XLSX file"))

export const mapCommand = Command.make(
  "map",
  {
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
  },
  Effect.fn("Mapping.command")(function*(a) {
    const name = resourceNamed(a.resource)
    if (name === undefined || resourceOf(name).kind === "readonly") {
      return yield* new UsageError({
        message: `unknown resource "${a.resource}"${didYouMean(a.resource, importable.flatMap((r) => namesOf(r.name)))}`
      })
    }
    const r = resourceOf(name)
    const sheet = Option.getOrUndefined(a.sheet)
    const source = yield* openSource(Path.resolve(a.file), {
      encoding: a.formats.encoding,
      delimiter: a.formats.delimiter === "tab" ? "\t" : a.formats.delimiter,
      resource: r.name,
      ...(sheet !== undefined ? { sheet } : {}),
      ...(a.formats.includeHidden ? { includeHidden: true } : {}),
      lenientHeader: true
    })
    const { candidates } = yield* sampleOf(source, undefined)
    const proposal = propose(r, candidates, { sheet: source.sheet ?? sheet })
    const above = candidates.filter((c) => c.row < proposal.headerRow).length
    yield* Console.log(t("mapping.headerFound", {
      resource: r.name,
      file: a.file,
      sheet: source.sheet !== undefined ? t("mapping.inSheet", { sheet: source.sheet }) : "",
      row: proposal.headerRow,
      above: above > 1 ? t("mapping.aboveNotRead", { count: above }) : above === 1 ? t("mapping.aboveNotReadOne") : ""
    }))
    for (const line of proposalTable(proposal.proposals)) yield* Console.log(`  ${line}`)
    if (proposal.missing.length > 0) {
      yield* Console.log(t("mapping.missing", { fields: proposal.missing.join(", ") }))
    }
    for (const note of proposal.notes) yield* Console.log(t("mapping.note", { note }))
    if (a.values) {
      const header = candidates.find((c) => c.row === proposal.headerRow)!.cells.map((c) => c.trim())
      const mapped = proposal.proposals.flatMap((p) =>
        p.field === undefined ? [] : [{ index: header.indexOf(p.source), source: p.source, field: p.field }]
      )
      const lists = yield* distinctValues(r, source.rows, proposal.headerRow, mapped)
      for (const list of lists) {
        yield* Console.log(t("mapping.valuesOf", { source: list.source, field: list.field, count: list.distinct }))
        for (const v of list.values) {
          yield* Console.log(
            `  ${JSON.stringify(v.value)} ×${v.count}${
              v.readAsIs === false
                ? `  ${t("mapping.needsValueMap")}`
                : v.readAsIs === undefined
                ? `  ${t("mapping.nameToLookUp")}`
                : ""
            }`
          )
        }
      }
    }
    const out = Option.getOrUndefined(a.out)
    if (out !== undefined) {
      const profile = { $schema: schemaRef(out), ...proposal.profile }
      yield* writeFileAtomic(out, `${JSON.stringify(profile, null, 2)}\n`)
      yield* say(t("mapping.wrote", { file: out, command: `fsm-bulk validate ${r.name} ${a.file} --map ${out}` }))
    } else if (!a.json) {
      yield* Console.log(JSON.stringify(proposal.profile, null, 2))
      yield* say(t("mapping.writeIt", { command: `fsm-bulk validate ${r.name} ${a.file} --map FILE.json` }))
    }
    if (a.json) {
      yield* Console.log(JSON.stringify({
        command: "map",
        resource: r.name,
        file: Path.resolve(a.file),
        headerRow: proposal.headerRow,
        proposals: proposal.proposals,
        missing: proposal.missing,
        notes: proposal.notes,
        profile: proposal.profile,
        ...(out !== undefined ? { out: Path.resolve(out) } : {}),
        exitCode: 0
      }))
    }
    return 0 as const
  })
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
