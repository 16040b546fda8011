/**
 * The export's continuation state, `DIR/.export-progress.json`: the run's parameters, the resources already
 * finished, and for each resource being walked (several at once) the last page whose rows are on disk with the
 * byte length of each partial file at that moment. Rewritten atomically after every page, so an export killed at any instant
 * continues from its last complete page; removed once the manifest is written.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { RunError, UsageError } from "../Errors.js"
import { writeFileAtomic } from "../files/Write.js"
import { CsvDialect, defaultCsvDialect, ExportFormat, ManifestEntry, Redaction } from "./Manifest.js"

export const checkpointFile = ".export-progress.json"

const Window = Schema.Struct({ start: Schema.String, end: Schema.String })
type Window = typeof Window.Type

/** A partial file: its length and data rows after the last complete page. */
const PartialFile = Schema.Struct({
  name: Schema.String,
  file: Schema.String,
  bytes: Schema.Number,
  rows: Schema.Number
})
type PartialFile = typeof PartialFile.Type

/** Where the walk of a resource under way stands: everything up to `page` (of `window`, of `parent`) is on disk. */
export const Position = Schema.Struct({
  resource: Schema.String,
  page: Schema.Number,
  /**
   * The size of the pages `page` counts (page K holds records `(K - 1) × pageSize + 1` on). Absent in checkpoints
   * of versions before it was recorded: `pageSizeOf` says what they asked.
   */
  pageSize: Schema.optional(Schema.Number),
  window: Schema.optional(Window),
  /** Per-parent lists (`/teams/{id}/users`): the parent whose pages are being walked. */
  parent: Schema.optional(Schema.String),
  /** Pages fetched so far for this resource, over all attempts. */
  pages: Schema.Number,
  files: Schema.Array(PartialFile)
})
export type Position = typeof Position.Type

export const Checkpoint = Schema.Struct({
  tool: Schema.Literal("fsm-bulk"),
  baseUrl: Schema.String,
  /** The account read (`accountOf`): a continued export must read the same one. */
  account: Schema.optional(Schema.String),
  format: ExportFormat,
  csv: Schema.optional(CsvDialect),
  /** What `--redact` replaced, with which key: a continued export must make the same fakes. */
  redaction: Schema.optional(Redaction),
  since: Schema.NullOr(Schema.String),
  until: Schema.NullOr(Schema.String),
  /** The files this export writes, in order: a rerun must ask for the same. */
  resources: Schema.Array(Schema.String),
  started: Schema.String,
  done: Schema.Array(ManifestEntry),
  /** The resources under way, in the export's order. */
  running: Schema.optional(Schema.Array(Position)),
  /** The one resource under way, as checkpoints written before resources were walked concurrently say it. */
  current: Schema.optional(Position)
})
export type Checkpoint = typeof Checkpoint.Type

const CheckpointJson = Schema.parseJson(Checkpoint)

/** The checkpoint of an interrupted export in `dir`, if there is one. */
export const readCheckpoint = Effect.fn("Checkpoint.read")(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = (yield* Path.Path).join(dir, checkpointFile)
  if (!(yield* fs.exists(path))) return Option.none<Checkpoint>()
  const text = yield* fs.readFileString(path)
  return yield* Schema.decodeUnknown(CheckpointJson)(text).pipe(
    Effect.map(Option.some),
    Effect.mapError(
      (cause) =>
        new RunError({
          message: `${path} is not a readable export checkpoint (remove it to start the export again): ${cause.message}`
        })
    )
  )
})

/** The resources under way in `c` (an older checkpoint's single `current` included). */
export const runningOf = (c: Checkpoint): ReadonlyArray<Position> => [
  ...(c.running ?? []),
  ...(c.current !== undefined && !(c.running ?? []).some((p) => p.resource === c.current!.resource) ? [c.current] : [])
]

/** `c` with `resource`'s position replaced by `position` (removed when undefined), in the order of `order`. */
export const withPosition = (
  c: Checkpoint,
  resource: string,
  position: Position | undefined,
  order: ReadonlyArray<string>
): Checkpoint => {
  const { current: _, running: __, ...rest } = c
  const others = runningOf(c).filter((p) => p.resource !== resource)
  const running = [...others, ...(position !== undefined ? [position] : [])]
    .sort((a, b) => order.indexOf(a.resource) - order.indexOf(b.resource))
  return running.length > 0 ? { ...rest, running } : rest
}

/**
 * The size of the pages `position` counts. Recorded since it mattered; a checkpoint written before says nothing,
 * and its size is what the version that wrote it asked (main's history): every list the export's page size
 * (`requested`, 1000) until 2026-11-27 15:08 UTC, when lists with a cap in the resource table (tasks: 100 a page,
 * the live service's limit) began to be asked in pages of the cap; a checkpoint that records the account (15:21 UTC
 * on) or lists its walks under way in `running` (18:13 UTC on) is from after that. For one without either, the rows
 * on disk rule out a size that could not have written them (pages before the last are full, none holds more than
 * the size). Undefined when both sizes remain possible: the walk then starts again from its first page (a page K of
 * the wrong size would write records twice or leave them out).
 */
export const pageSizeOf = (
  c: Checkpoint,
  position: Position,
  cap: number | undefined,
  requested: number
): number | undefined => {
  if (position.pageSize !== undefined) return position.pageSize
  const capped = cap !== undefined ? Math.min(requested, cap) : requested
  if (capped === requested || c.running !== undefined || c.account !== undefined) return capped
  const rows = position.files.find((f) => f.name === position.resource)?.rows
  const possible = (size: number) =>
    rows === undefined || (rows >= (position.page - 1) * size + (position.page > 0 ? 1 : 0) &&
      rows <= position.pages * size)
  if (possible(requested) && !possible(capped)) return requested
  if (possible(capped) && !possible(requested)) return capped
  return undefined
}

export const writeCheckpoint = Effect.fn("Checkpoint.write")(function*(dir: string, checkpoint: Checkpoint) {
  const path = (yield* Path.Path).join(dir, checkpointFile)
  yield* writeFileAtomic(path, JSON.stringify(Schema.encodeSync(Checkpoint)(checkpoint)))
})

export const removeCheckpoint = Effect.fn("Checkpoint.remove")(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  yield* fs.remove((yield* Path.Path).join(dir, checkpointFile), { force: true })
})

const dialectText = (csv: CsvDialect | undefined) => {
  const { decimal, delimiter } = csv ?? defaultCsvDialect
  return `--delimiter ${delimiter === "\t" ? "tab" : delimiter} --decimal ${decimal}`
}

/** The parameters a continued export must repeat, compared one by one so the message can name the difference. */
export const sameRun = Effect.fn("Checkpoint.sameRun")(function*(
  saved: Checkpoint,
  now: Pick<Checkpoint, "baseUrl" | "account" | "format" | "csv" | "redaction" | "since" | "until" | "resources">,
  dir: string
) {
  const differences = [
    saved.baseUrl !== now.baseUrl ? `base URL ${saved.baseUrl} (now ${now.baseUrl})` : undefined,
    saved.baseUrl === now.baseUrl && saved.account !== undefined && now.account !== undefined &&
      saved.account !== now.account
      ? `other credentials, another account of ${saved.baseUrl}`
      : undefined,
    saved.format !== now.format ? `--format ${saved.format} (now ${now.format})` : undefined,
    dialectText(saved.csv) !== dialectText(now.csv)
      ? `${dialectText(saved.csv)} (now ${dialectText(now.csv)})`
      : undefined,
    JSON.stringify(saved.redaction ?? null) !== JSON.stringify(now.redaction ?? null)
      ? "another --redact (other fields, another --redact-key, or none)"
      : undefined,
    saved.since !== now.since ? `--since ${saved.since ?? "(none)"} (now ${now.since ?? "(none)"})` : undefined,
    saved.until !== now.until ? `--until ${saved.until ?? "(none)"} (now ${now.until ?? "(none)"})` : undefined,
    saved.resources.join(",") !== now.resources.join(",")
      ? `resources ${saved.resources.join(" ")} (now ${now.resources.join(" ")})`
      : undefined
  ].filter((x) => x !== undefined)
  if (differences.length > 0) {
    return yield* new UsageError({
      message: `${dir} holds an interrupted export made with ${
        differences.join("; ")
      }: run it again with the same arguments to continue it, or choose another --out`
    })
  }
})
