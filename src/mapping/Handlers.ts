/**
 * What the commands of mapping/Command.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Path from "node:path"
import { namesOf, resourceNamed } from "../Aliases.js"
import type { Input } from "../cli/Lazy.js"
import { say } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { openSource } from "../files/Read.js"
import { writeFileAtomic } from "../files/Write.js"
import { t } from "../Messages.js"
import { importable, resource as resourceOf } from "../Resources.js"
import { didYouMean } from "../Words.js"
import type { mapConfig } from "./Command.js"
import { schemaRef } from "./Profile.js"
import { distinctValues, proposalTable, propose, sampleOf } from "./Propose.js"
export const handleMap = Effect.fn("Mapping.command")(function*(a: Input<typeof mapConfig>) {
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
