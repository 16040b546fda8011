/**
 * The export pipeline: walks every planned list under the shared budget, pages straight to disk (memory flat in
 * the number of records), reference columns filled from id → key maps, a checkpoint after every page, and
 * `manifest.json` written last and atomically. Run again with the same `--out`, an interrupted export continues
 * from its last complete page (CSV) or from the start of the unfinished resource (XLSX); finished resources are
 * kept and not fetched again.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Api, type ApiAborted, type ListFailed } from "../client/Api.js"
import { dayOf, defaultSince, defaultUntil } from "../Days.js"
import { type InputError, UsageError } from "../Errors.js"
import { writeFileAtomic } from "../files/Write.js"
import { version } from "../Version.js"
import type { KeyLookup, KeyNeed } from "./Cells.js"
import type { Checkpoint, Position } from "./Checkpoint.js"
import {
  checkpointFile,
  pageSizeOf,
  readCheckpoint,
  removeCheckpoint,
  runningOf,
  sameRun,
  withPosition,
  writeCheckpoint
} from "./Checkpoint.js"
import { fingerprintsName, openFingerprints } from "./Fingerprint.js"
import type { KeyStore } from "./Keys.js"
import { compareIds, makeKeyStore } from "./Keys.js"
import type { CsvDialect, ExportFormat, Manifest, ManifestEntry } from "./Manifest.js"
import { defaultCsvDialect, manifestFile } from "./Manifest.js"
import { pageRows } from "./PageRows.js"
import type { Redactor } from "./Redact.js"
import type { Walk } from "./Walks.js"
import { planExport, plannedFiles } from "./Walks.js"
import type { ExportWriter } from "./Writers.js"
import { canResume, openExportWriter, partialName } from "./Writers.js"

export interface ExportRequest {
  /** Resource names as given; empty = everything the account holds. */
  readonly resources: ReadonlyArray<string>
  readonly out: string
  readonly format: ExportFormat
  /** How CSV files are written (delimiter, decimal mark); default commas and decimal points. */
  readonly csv?: CsvDialect
  /** Range of the date-windowed lists (`yyyy-MM-dd`, inclusive); defaults cover the whole history. */
  readonly since: string | undefined
  readonly until: string | undefined
  /** Records asked per page (default 1000). */
  readonly pageSize?: number
  /** A progress line for the human (stderr). */
  readonly say: (line: string) => Effect.Effect<void>
  /** Between periodic progress lines inside one resource. */
  readonly progressEveryMs?: number
  /** Personal data replaced with fakes as records are read (`--redact`). */
  readonly redact?: Redactor
}

const dialectOf = (request: ExportRequest): CsvDialect => request.csv ?? defaultCsvDialect

interface ExportedFile extends ManifestEntry {
  /** Pages fetched for the walk that produced the file (over all attempts). */
  readonly pages: number
  /** Requests this run spent on the walk (keys of referenced resources included). */
  readonly requests: number
  /** Finished by an earlier, interrupted run and kept. */
  readonly kept: boolean
  /** The walk continued from this page of an earlier run (CSV). */
  readonly resumedAfterPage?: number
}

export interface ExportResult {
  readonly dir: string
  readonly manifest: Manifest
  /** An interrupted export was continued. */
  readonly continued: boolean
  readonly files: ReadonlyArray<ExportedFile>
  readonly requests: number
  readonly rateLimited: number
  readonly retries: number
}

export const defaultPageSize = 1000
/** Walks of one resource whose list keeps changing under them, before the export fails. */
export const shiftedWalks = 3

const checkDate = Effect.fn("Export.checkDate")(function*(flag: string, text: string | undefined) {
  if (text === undefined || dayOf(text.trim()) !== undefined) return text?.trim()
  return yield* new UsageError({ message: `${flag}: "${text}" is not a date as yyyy-mm-dd (example: 2025-01-31)` })
})

export interface PreparedExport {
  readonly request: ExportRequest
  readonly walks: ReadonlyArray<Walk>
  readonly askedSince: string | undefined
  readonly askedUntil: string | undefined
}

/**
 * Everything that can be refused before a request is sent (or the embedded sandbox started): the resource
 * names, the dates, and an `--out` that holds a finished export or files of someone else's.
 */
export const prepareExport = Effect.fn("Export.prepare")(function*(request: ExportRequest) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const dir = request.out
  const walks = yield* planExport(request.resources, request.format)
  const askedSince = yield* checkDate("--since", request.since)
  const askedUntil = yield* checkDate("--until", request.until)
  if (askedSince !== undefined && askedUntil !== undefined && dayOf(askedSince)! > dayOf(askedUntil)!) {
    return yield* new UsageError({ message: `--since ${askedSince} is after --until ${askedUntil}` })
  }
  if (yield* fs.exists(path.join(dir, manifestFile))) {
    return yield* new UsageError({
      message:
        `${dir} already holds a finished export (${manifestFile}): choose another --out, or run "fsm-bulk verify ${dir}"`
    })
  }
  if (!(yield* fs.exists(path.join(dir, checkpointFile)))) {
    const existing = yield* Effect.filter(plannedFiles(walks), (o) => fs.exists(path.join(dir, o.file)))
    if (existing.length > 0) {
      return yield* new UsageError({
        message: `${dir} already has ${existing.map((o) => o.file).join(", ")}: choose an empty or new --out`
      })
    }
  }
  return { request, walks, askedSince, askedUntil } satisfies PreparedExport as PreparedExport
})

export const runExport = Effect.fn("Export.run")(function*(prepared: PreparedExport) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const api = yield* Api
  const { askedSince, askedUntil, request, walks } = prepared
  const pageSize = request.pageSize ?? defaultPageSize
  const dir = request.out
  const files = plannedFiles(walks)
  const initial = yield* api.stats
  yield* fs.makeDirectory(dir, { recursive: true })
  const saved = yield* readCheckpoint(dir)

  // Unasked dates of a continued export are the first run's, so "today + 2 years" does not move under it.
  const now = yield* Clock.currentTimeMillis
  const since = askedSince ??
    Option.match(saved, { onNone: () => defaultSince, onSome: (c) => c.since ?? defaultSince })
  const until = askedUntil ??
    Option.match(saved, { onNone: () => defaultUntil(now), onSome: (c) => c.until ?? defaultUntil(now) })
  if (dayOf(since)! > dayOf(until)!) {
    return yield* new UsageError({ message: `--since ${since} is after --until ${until}` })
  }

  const run = {
    baseUrl: api.baseUrl,
    ...(api.account !== undefined ? { account: api.account } : {}),
    format: request.format,
    ...(request.format === "csv" && request.csv !== undefined ? { csv: request.csv } : {}),
    ...(request.redact !== undefined ? { redaction: request.redact.manifest } : {}),
    since,
    until,
    resources: files.map((o) => o.resource.name)
  }
  if (Option.isSome(saved)) yield* sameRun(saved.value, run, dir)
  const checkpoint = yield* Ref.make<Checkpoint>(
    Option.getOrElse(
      saved,
      () => ({ tool: "fsm-bulk" as const, ...run, started: new Date(now).toISOString(), done: [] })
    )
  )
  if (Option.isSome(saved)) {
    const done = saved.value.done.map((d) => d.file)
    const under = runningOf(saved.value)
    yield* request.say(
      `export: continuing the interrupted export in ${dir}` +
        (done.length > 0 ? ` (${done.length} file(s) kept: ${done.join(", ")})` : "") +
        (under.length > 0
          ? `; ${
            under.map((p) =>
              `${p.resource} ${
                request.format === "csv" ? `from page ${p.page + 1}` : "from its first page (XLSX cannot be continued)"
              }`
            ).join(", ")
          }`
          : "")
    )
  }
  /** The checkpoint as it stands, written by one walk at a time (walks run concurrently). */
  const writing = yield* Effect.makeSemaphore(1)
  const save = writing.withPermits(1)(Effect.flatMap(Ref.get(checkpoint), (c) => writeCheckpoint(dir, c)))
  const order = walks.map((w) => w.resource.name)

  const keys = yield* makeKeyStore(pageSize, dialectOf(request).delimiter)
  const finishedFile = (name: string) => Effect.map(Ref.get(checkpoint), (c) => c.done.find((d) => d.name === name))
  /** Each file this run writes, done when its walk has finished it: later walks read their keys from it. */
  const finishing = new Map<string, { readonly walk: number; readonly done: Deferred.Deferred<void> }>()
  for (const [i, walk] of walks.entries()) {
    for (const o of walk.outputs) finishing.set(o.resource.name, { walk: i, done: yield* Deferred.make<void>() })
  }

  /**
   * The maps a walk's reference columns need: from files finished in `dir`, else from the API. A file an earlier
   * walk of this export (in the plan's order) is still writing is waited for, so keys come from files as when
   * walks ran one after another; a later walk's is not (it may be waiting for this one).
   */
  const ensureKeys = Effect.fn("Export.ensureKeys")(function*(walk: number, needs: ReadonlyArray<KeyNeed>) {
    for (const need of needs) {
      if (keys.has(need)) continue
      let done = yield* finishedFile(need.resource)
      const writer = finishing.get(need.resource)
      if (done === undefined && writer !== undefined && writer.walk < walk) {
        yield* Deferred.await(writer.done)
        done = yield* finishedFile(need.resource)
      }
      yield* keys.ensure(need, done !== undefined ? path.join(dir, done.file) : undefined)
    }
  })

  const exportWalk = (walk: Walk, index: number) =>
    Effect.gen(function*() {
      const state = yield* Ref.get(checkpoint)
      const kept = walk.outputs.map((o) => state.done.find((d) => d.name === o.resource.name))
      if (kept.every((d) => d !== undefined)) {
        return kept.map((d): ExportedFile => ({ ...d!, pages: 0, requests: 0, kept: true }))
      }
      const before = yield* api.stats
      const context: WalkContext = {
        dir,
        request,
        pageSize,
        since,
        until,
        keys,
        ensureKeys: (needs) => ensureKeys(index, needs),
        checkpoint,
        save,
        order,
        api,
        requestsBefore: initial.requests
      }
      // Records added or deleted while a list is walked move its later pages: records that existed throughout
      // would be missed. Such a walk fails (`Shifted`) and the resource is walked again from its first page, its
      // files written anew; a list that never holds still fails the export.
      let result: Effect.Effect.Success<ReturnType<typeof walkOne>> | undefined
      for (let attempt = 1; result === undefined; attempt++) {
        const walked = yield* Effect.either(walkOne(walk, context))
        if (Either.isRight(walked)) {
          result = walked.right
          break
        }
        const failed = walked.left
        if (failed._tag !== "ListFailed" || failed.reason !== "Shifted" || attempt >= shiftedWalks) {
          return yield* failed
        }
        yield* request.say(
          `${walk.resource.name}: ${failed.message}: walking ${walk.resource.name} again from its first page (walk ${
            attempt + 1
          } of at most ${shiftedWalks})`
        )
        yield* Ref.update(checkpoint, (c) => withPosition(c, walk.resource.name, undefined, order))
      }
      for (const o of walk.outputs) yield* Deferred.succeed(finishing.get(o.resource.name)!.done, undefined)
      const after = yield* api.stats
      return result.files.map((f): ExportedFile => ({ ...f, requests: after.requests - before.requests }))
    })

  // Independent lists are walked concurrently: the client keeps its requests in flight within its limit and the
  // budget, so a slow service's pages of several resources overlap. Each file is written by its own walk, page by
  // page in order, so the files are those of walks one after another.
  const walked = yield* Effect.forEach(walks, exportWalk, { concurrency: "unbounded" })
  const exported = walked.flat()

  const state = yield* Ref.get(checkpoint)
  const manifest: Manifest = {
    tool: "fsm-bulk",
    version,
    baseUrl: api.baseUrl,
    ...(api.account !== undefined ? { account: api.account } : {}),
    started: state.started,
    finished: new Date(yield* Clock.currentTimeMillis).toISOString(),
    since,
    until,
    format: request.format,
    ...(request.format === "csv" ? { csv: dialectOf(request) } : {}),
    ...(request.redact !== undefined
      ? {
        redaction: {
          ...request.redact.manifest,
          // The fields of the files written (customers-complete, for one, is never exported).
          fields: request.redact.manifest.fields.filter((f) => files.some((o) => o.resource.name === f.resource))
        }
      }
      : {}),
    resources: files.map((o) => state.done.find((d) => d.name === o.resource.name)!)
  }
  yield* writeFileAtomic(path.join(dir, manifestFile), `${JSON.stringify(manifest, null, 2)}\n`)
  yield* removeCheckpoint(dir)
  const stats = yield* api.stats
  return {
    dir,
    manifest,
    continued: Option.isSome(saved),
    files: exported,
    requests: stats.requests - initial.requests,
    rateLimited: stats.rateLimited - initial.rateLimited,
    retries: stats.retries - initial.retries
  } satisfies ExportResult as ExportResult
})

interface WalkContext {
  readonly dir: string
  readonly request: ExportRequest
  readonly pageSize: number
  readonly since: string
  readonly until: string
  readonly keys: KeyStore
  /** Loads the maps of `needs` not loaded yet, from a finished file of this export or the API. */
  readonly ensureKeys: (needs: ReadonlyArray<KeyNeed>) => Effect.Effect<void, ApiAborted | ListFailed | InputError>
  readonly checkpoint: Ref.Ref<Checkpoint>
  /** Writes the checkpoint as it stands (one walk at a time). */
  readonly save: ReturnType<typeof writeCheckpoint>
  /** The walks' resources in the plan's order (the checkpoint lists those under way so). */
  readonly order: ReadonlyArray<string>
  readonly api: Api["Type"]
  /** The client's request count when the export began (progress lines count from there). */
  readonly requestsBefore: number
}

/** Where a walk starts: from an earlier run's position when its partial files are intact (CSV), else page 1. */
const startOf = Effect.fn("Export.startOf")(function*(walk: Walk, ctx: WalkContext) {
  const saved = yield* Ref.get(ctx.checkpoint)
  const current = runningOf(saved).find((p) => p.resource === walk.resource.name)
  if (current === undefined || ctx.request.format !== "csv") return undefined
  const pageSize = pageSizeOf(saved, current, walk.resource.maxPageSize, ctx.pageSize)
  if (pageSize === undefined) {
    yield* ctx.request.say(
      `${walk.resource.name}: the checkpoint, written by an earlier version, does not say whether its pages held ${ctx.pageSize} or ${walk.resource.maxPageSize} records: starting this resource again`
    )
    return undefined
  }
  for (const o of walk.outputs) {
    const at = current.files.find((f) => f.name === o.resource.name)
    if (at === undefined || !(yield* canResume(ctx.dir, o.file, at, o.mapper.header, dialectOf(ctx.request)))) {
      yield* ctx.request.say(
        `${walk.resource.name}: the partial file ${
          partialName(o.file)
        } is missing or shorter than recorded: starting this resource again`
      )
      return undefined
    }
  }
  return { ...current, pageSize }
})

const walkOne = Effect.fn("Export.walk")(function*(walk: Walk, ctx: WalkContext) {
  const { api, dir, request } = ctx
  const start = yield* startOf(walk, ctx)
  const writers: Array<ExportWriter> = yield* Effect.forEach(walk.outputs, (o) => {
    const at = start?.files.find((f) => f.name === o.resource.name)
    return openExportWriter(
      request.format,
      dir,
      o.file,
      o.mapper.header,
      o.resource.name,
      at && { bytes: at.bytes, rows: at.rows },
      dialectOf(request)
    )
  })
  // Records of a list of their own (not per parent) that have a key or an id get fingerprints.
  const fingerprinted = walk.parent === undefined &&
      (walk.resource.key !== undefined || walk.resource.id !== undefined)
    ? walk.outputs.find((o) => o.derivedFrom === undefined && o.resource.name === walk.resource.name)
    : undefined
  const fingerprints = fingerprinted !== undefined
    ? yield* openFingerprints(dir, fingerprinted.file, walk.resource, start !== undefined)
    : undefined
  let pages = start?.pages ?? 0
  let lastLine = yield* Clock.currentTimeMillis
  const every = request.progressEveryMs ?? 5_000

  const record = (position: Omit<Position, "resource" | "pages" | "files">) =>
    Ref.update(ctx.checkpoint, (c) =>
      withPosition(c, walk.resource.name, {
        resource: walk.resource.name,
        pages,
        ...position,
        files: walk.outputs.map((o, i) => ({ name: o.resource.name, file: o.file, ...writers[i]!.position() }))
      }, ctx.order))

  /**
   * A page's rows. A reference map is loaded only when a record refers to it: a resource nobody references costs
   * no request (an account without groups or segments spends nothing on them). The rows are mapped once more
   * when a map had to be loaded first.
   */
  const rowsOf = (records: ReadonlyArray<Record<string, unknown>>, parentId: string | undefined) =>
    Effect.suspend(() => {
      const missing = new Map<string, KeyNeed>()
      const probe: KeyLookup = (resource, key, id) => {
        if (ctx.keys.has({ resource, key })) return ctx.keys.lookup(resource, key, id)
        missing.set(`${resource}.${key}`, { resource, key })
        return undefined
      }
      const rows = pageRows(walk, records, probe, parentId)
      if (missing.size === 0) return Effect.succeed(rows)
      return Effect.zipRight(
        ctx.ensureKeys([...missing.values()]),
        Effect.sync(() => pageRows(walk, records, ctx.keys.lookup, parentId))
      )
    })

  const onPage = (
    page: {
      readonly page: number
      readonly size: number
      readonly records: ReadonlyArray<Record<string, unknown>>
      readonly window?: Position["window"]
    },
    parentId: string | undefined
  ) =>
    Effect.gen(function*() {
      // Redacted before anything is written: the fingerprints too hash only the fakes.
      const records = request.redact?.records(walk.resource, page.records) ?? page.records
      const rows = yield* rowsOf(records, parentId)
      yield* Effect.forEach(rows, (r, i) => writers[i]!.write(r), { discard: true })
      if (fingerprints !== undefined) yield* fingerprints.write(records)
      pages += 1
      yield* record({
        page: page.page,
        pageSize: page.size,
        ...(page.window ? { window: page.window } : {}),
        ...(parentId !== undefined ? { parent: parentId } : {})
      })
      // XLSX cannot be continued from a page: only the finished resource is recorded.
      if (request.format === "csv") yield* ctx.save
      const t = yield* Clock.currentTimeMillis
      if (t - lastLine >= every) {
        lastLine = t
        const stats = yield* api.stats
        yield* request.say(
          `${walk.resource.name}: ${writers[0]!.position().rows} rows, ${pages} pages` +
            (page.window ? `, window ${page.window.start}..${page.window.end}` : "") +
            (parentId !== undefined ? `, ${walk.parent!.name} ${parentId}` : "") +
            `, ${stats.requests - ctx.requestsBefore} requests so far`
        )
      }
    })

  // Recorded before the first page too, so a rerun knows which resource was under way (and, for CSV, where).
  if (start === undefined) {
    yield* record({ page: 0 })
    yield* ctx.save
  }

  // A continued walk goes on from the record its checkpoint reached, in pages of the size it counts.
  const options = (fromPage: number, window?: Position["window"]) => ({
    pageSize: ctx.pageSize,
    resource: walk.resource,
    since: ctx.since,
    until: ctx.until,
    fromPage,
    ...(fromPage > 1 && start?.pageSize !== undefined ? { fromPageSize: start.pageSize } : {}),
    ...(window !== undefined ? { window } : {})
  })

  if (walk.parent !== undefined) {
    const need = { resource: walk.parent.name, key: walk.parent.key ?? walk.parent.id?.name ?? "id" }
    yield* ctx.ensureKeys([need])
    const parents = ctx.keys.ids(need).filter((id) => start?.parent === undefined || compareIds(id, start.parent) >= 0)
    yield* Effect.forEach(
      parents,
      (parentId) => {
        const fromPage = start !== undefined && start.parent === parentId ? start.page + 1 : 1
        return Stream.runForEach(
          api.pages(walk.resource.path.replace("{id}", encodeURIComponent(parentId)), options(fromPage)),
          (page) => onPage(page, parentId)
        )
      },
      { discard: true }
    )
  } else {
    const fromPage = start !== undefined ? start.page + 1 : 1
    yield* Stream.runForEach(
      api.pages(walk.resource.path, options(fromPage, start?.window)),
      (page) => onPage(page, undefined)
    )
  }

  const written = yield* Effect.forEach(writers, (w) => w.finish)
  if (fingerprints !== undefined) yield* fingerprints.finish
  const entries = walk.outputs.map(
    (o, i): ManifestEntry => ({
      name: o.resource.name,
      file: o.file,
      rows: written[i]!.rows,
      sha256: written[i]!.sha256,
      bytes: written[i]!.bytes,
      ...(o.derivedFrom !== undefined ? { derivedFrom: o.derivedFrom } : {}),
      ...(o === fingerprinted ? { fingerprints: fingerprintsName(o.file) } : {})
    })
  )
  yield* Ref.update(ctx.checkpoint, (c) => {
    const rest = withPosition(c, walk.resource.name, undefined, ctx.order)
    return { ...rest, done: [...c.done.filter((d) => !entries.some((e) => e.name === d.name)), ...entries] }
  })
  yield* ctx.save
  const stats = yield* api.stats
  yield* request.say(
    entries.map((e) => `${e.name}: ${e.rows} rows → ${e.file}`).join("; ") +
      ` (${pages} page${pages === 1 ? "" : "s"}${start ? `, continued after page ${start.page}` : ""}; ${
        stats.requests - ctx.requestsBefore
      } requests so far)`
  )
  return {
    files: entries.map((e): Omit<ExportedFile, "requests"> => ({
      ...e,
      pages,
      kept: false,
      ...(start ? { resumedAfterPage: start.page } : {})
    }))
  }
}, Effect.scoped)
