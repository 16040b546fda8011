/**
 * The contract's parsing flags, shared by every command that reads input files (`validate`, `import`, `onboard`).
 * `auto` never guesses silently: an ambiguous file stops with an error naming the flag that settles it.
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as Path from "node:path"
import { InputError, UsageError } from "../Errors.js"
import type { OnConflict, ReadSettings } from "../import/Journal.js"
import { readProfile } from "../mapping/Profile.js"
import { isResourceName } from "../Resources.js"
import { withShownDefault } from "./Facts.js"

export const fileFormatOptions = Options.all({
  encoding: Options.choice("encoding", ["auto", "utf-8", "windows-1252"]).pipe(
    withShownDefault("auto" as const),
    Options.withDescription("CSV text encoding (auto: UTF-8 with or without BOM, else Windows-1252)")
  ),
  delimiter: Options.choice("delimiter", ["auto", ",", ";", "tab"]).pipe(
    withShownDefault("auto" as const),
    Options.withDescription("CSV delimiter")
  ),
  dateFormat: Options.choice("date-format", ["auto", "yyyy-mm-dd", "dd/mm/yyyy", "mm/dd/yyyy"]).pipe(
    withShownDefault("auto" as const),
    Options.withDescription(
      "How dates are written (auto settles each file on its own and refuses to guess when it reads both ways)"
    )
  ),
  decimal: Options.choice("decimal", ["auto", ".", ","]).pipe(
    withShownDefault("auto" as const),
    Options.withDescription("Decimal mark of numbers")
  ),
  includeHidden: Options.boolean("include-hidden").pipe(
    Options.withDescription(
      "XLSX: also import the rows and columns the sheet hides (by hand or by a filter); by default they are not sent"
    )
  )
})

/** `--attachments-root DIR` (`validate`, `import`, `rerun`, `onboard`): the folder attachments must lie inside. */
export const attachmentsRootOption = Options.text("attachments-root").pipe(
  Options.withPseudoName("DIR"),
  Options.withDescription("Folder that files named in file columns must lie inside (default: the input file's folder)"),
  Options.optional
)

/** The given `--attachments-root`, as an absolute path to an existing folder, or a usage error. */
export const attachmentsRoot = (given: Option.Option<string>): Effect.Effect<string | undefined, UsageError> =>
  Option.match(given, {
    onNone: () => Effect.succeed(undefined),
    onSome: (dir) =>
      Effect.suspend(() => {
        const path = Path.resolve(dir)
        const info = fs.statSync(path, { throwIfNoEntry: false })
        return info?.isDirectory() === true
          ? Effect.succeed(path)
          : Effect.fail(
            new UsageError({
              message: `--attachments-root: ${path} ${info === undefined ? "does not exist" : "is not a folder"}`
            })
          )
      })
  })

/** `--send-write-only`: updates send create-only fields (passwords) too (import/Pipeline.ts `ImportJob`). */
export const sendWriteOnlyOption = Options.boolean("send-write-only").pipe(
  Options.withDescription(
    "Also send create-only fields (users' password) to records that exist; by default they are sent on create only"
  )
)

/** `--merge` / `--overwrite`: rows of an exported file whose records changed on the server since the export. */
export const conflictOptions = Options.all({
  merge: Options.boolean("merge").pipe(
    Options.withDescription(
      "Rows of an exported file whose records changed on the server since: send the file's changes when they touch other fields"
    )
  ),
  overwrite: Options.boolean("overwrite").pipe(
    Options.withDescription(
      "Rows of an exported file whose records changed on the server since: send them anyway (the server's edits are lost)"
    )
  )
})

/** The `OnConflict` the flags ask for (undefined: `conflict`), or a usage error for both at once. */
export const onConflictOf = (
  flags: { readonly merge: boolean; readonly overwrite: boolean }
): Effect.Effect<OnConflict | undefined, UsageError> =>
  flags.merge && flags.overwrite
    ? new UsageError({ message: "--merge and --overwrite exclude each other: choose one" })
    : Effect.succeed(flags.merge ? "merge" : flags.overwrite ? "overwrite" : undefined)

/**
 * How a file is read, from the parsing flags (`--delimiter tab` is the tab character); `--sheet` where the command
 * has it.
 */
export const readSettings = (p: {
  readonly encoding: ReadSettings["encoding"]
  readonly delimiter: "auto" | "," | ";" | "tab"
  readonly sheet?: Option.Option<string>
  readonly includeHidden?: boolean
}): ReadSettings => ({
  encoding: p.encoding,
  delimiter: p.delimiter === "tab" ? "\t" : p.delimiter,
  ...(p.sheet !== undefined && Option.isSome(p.sheet) ? { sheet: p.sheet.value } : {}),
  ...(p.includeHidden === true ? { includeHidden: true } : {})
})

/** `--map PROFILE` (`validate`, `import`; `onboard` has its own, below): the mapping profile the file is read through (docs/mapping.md). */
export const mapOption = Options.text("map").pipe(
  Options.withPseudoName("PROFILE"),
  Options.withDescription(
    "Mapping profile (JSON): which column is which field, header row, value maps; columns it does not map are not sent"
  ),
  Options.optional
)

/**
 * `--map [RESOURCE=]PROFILE`, repeatable (`onboard`): a profile per resource; without `RESOURCE=` the profile's own
 * `resource` says which step it is for.
 */
export const onboardMapOption = Options.text("map").pipe(
  Options.withPseudoName("[RESOURCE=]PROFILE"),
  Options.withDescription(
    "Mapping profile of one step (repeat per resource): its resource's file is read through it; its \"sheet\" names the customer's own sheet or file"
  ),
  Options.repeated
)

/** The profiles `--map` names (`RESOURCE=` checked against each profile's own resource), read and decoded now. */
export const readProfiles = (given: ReadonlyArray<string>) =>
  Effect.forEach(given, (text) => {
    const m = /^([a-z-]+)=(.+)$/i.exec(text)
    const named = m !== null && isResourceName(m[1]!.toLowerCase()) ? m[1]!.toLowerCase() : undefined
    const file = named !== undefined ? m![2]! : text
    return Effect.flatMap(readProfile(file), (record) =>
      named !== undefined && record.profile.resource.trim().toLowerCase() !== named
        ? Effect.fail(
          new InputError({
            file: record.file,
            column: "resource",
            detail: `--map ${named}=…: the profile is for ${record.profile.resource}, not ${named}`
          })
        )
        : Effect.succeed(record))
  })

/** `read` with the profile `--map` names, read and decoded now (its content and sha256 go into the journal). */
export const withProfile = (read: ReadSettings, given: Option.Option<string>) =>
  Option.match(given, {
    onNone: () => Effect.succeed(read),
    onSome: (file) => Effect.map(readProfile(file), (map): ReadSettings => ({ ...read, map }))
  })
