/**
 * Walking list calls. `totalItems` is not trusted as a count to stop at, and a walk stops on a short page or an
 * answer whose `links` lack `nextPage`. Bare-array answers (legacy lists) are one page.
 *
 * A 404 on a list means "no (more) records" on the live service (api-notes B), but it is also what a burst of
 * concurrent calls on one token gets for a list that is not empty (api-notes, "Live behaviour reported by more
 * public clients"). So a 404 is the end only once confirmed: the client asks a call answered 404 while other
 * requests of it were in flight again while it is the only one (`HttpAdapter`), and takes that answer instead. A list that cannot be read (5xx after the GET
 * retries, a 4xx) fails the walk with `ListFailed`: never "no such record".
 *
 * Page sizes: the one asked for (or the client's), capped by the resource's `maxPageSize` (tasks: 100) and by
 * what the server refused earlier in this run: a 400 that names a page limit ("You cannot request more than 100
 * tasks per page") is settled on the size it names (else half the size) and remembered in `PageLimits` for every
 * later walk of that path; the first page is asked again at once. A later page refused for its size (the limit fell
 * while the list was walked, or a continued walk asks the size its checkpoint recorded and the server takes no
 * longer) is not asked again as the same page number in another size: the walk goes on from the record it reached in
 * pages of the size now known (`walk`).
 *
 * Date-windowed resources (tasks, deleted tasks, expenses, tickets) need `startDate`/`endDate` in
 * `paramFilter`. A window is probed before its pages are asked: where the page size is settled (the resource table
 * caps it, as tasks' 100, or a page that large was answered this run) the probe is a count call (`pageSize=1`, which
 * the live service answers in seconds where a page of 100 tasks takes 12 s or more), else the window's first page
 * (kept unless the window is split). The pages of counted windows are asked in the size `fillingSize` chooses from
 * the first count, so that the last round of `concurrency` pages at once is full (a partly empty one leaves slots
 * idle for a page's time); each `Page` says its size, which an export's checkpoint records, and a continued walk
 * asks that size again (`continuation`). The whole range `since..until` is probed first; a window whose count gives
 * more than `maxWindowPages` pages is split into as many parts as the count needs (a power of two, parts of equal
 * days), each probed at once; a window that fits has its pages asked ahead at once. So a small list costs its count
 * and its page (an empty one its count), and a large one has every page known, and asked, a few counts after the
 * start. The requests go through one queue per walk (`Ahead.ts`): within the client's in-flight limit, probes first
 * while fewer pages wait than there are slots, else pages in reading order, so a slow service's slots are never idle
 * while something is known to be asked. The windows depend on the range and the data only. An interrupted export
 * resumes with the same range, the `window` of its last complete page and `fromPage`: everything dated before that
 * window is on disk and nothing after it, so the walk continues in that window from `fromPage` and finds windows
 * for the days after it, whatever chose the windows before (another version, or records added since).
 *
 * Pages of a list that is not windowed are fetched ahead, up to the client's `concurrency` at once (a page of the
 * live service takes seconds): the pages after the first up to the count its `totalItems` gives, taken in page
 * order, so a walk yields exactly what a walk one page at a time yields and its checkpoints stay in order. Past that
 * count (or with none) a walk goes on one page at a time, so a wrong count costs time, never a page asked past the
 * end.
 *
 * A page whose records were all seen on earlier pages of the same walk stops it with `ListFailed`: a server that
 * ignores `page` and keeps sending a full page with a `nextPage` link would otherwise be walked forever. (One
 * repeated record is not enough: a record inserted while the list is walked shifts the next page by one.)
 *
 * A walk whose window shifted while it was read fails with `ListFailed` reason `Shifted`: records deleted (or
 * inserted) before the page being read move the later pages, so records that existed throughout are skipped (or
 * listed twice). It is seen when a page's `totalItems` differs from the first page's, or when an unfiltered walk
 * of a list whose records carry ids ends with fewer distinct records than every page said it holds. (`totalItems: 0` on a
 * page with records, as `/taskTypes` answers, is not a count.) The caller walks again.
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { dayOf, defaultSince, defaultUntil, formatDay } from "../Days.js"
import { idReadName, type Resource } from "../Resources.js"
import { makeAhead } from "./Ahead.js"
import type { ApiAborted, ListOptions, Page, Reply } from "./Api.js"
import { ListFailed } from "./Api.js"
import { listPage } from "./Body.js"
import type { ClientSettings } from "./Config.js"
import { resourceOfPath } from "./Reconcile.js"

/**
 * A GET of a list page (a 404 or 500 answered while other requests were in flight is asked again alone by the
 * client); `trustNotFound`: a 404 is taken as it comes.
 */
export type Get = (
  path: string,
  query: Readonly<Record<string, string | number | object | undefined>>,
  trustNotFound?: boolean
) => Effect.Effect<Reply, ApiAborted>

/** Page sizes the server refused this run, by list path: a walk of the path asks for at most this many records. */
export type PageLimits = Map<string, number>

/**
 * The page size a 400 answer says is the most a page may hold: the number it names ("You cannot request more
 * than 100 tasks per page"), else half of `tried` when it speaks of a page size; undefined when it is about
 * something else.
 */
const pageLimitOf = (message: string, tried: number): number | undefined => {
  const named =
    /more than (\d+)\b[^.]*per page|(?:page ?size|per page)[^.\d]*(?:maximum|max\.?|at most|limit)[^.\d]*(\d+)/i
      .exec(message)
  const n = named === null ? undefined : Number(named[1] ?? named[2])
  if (n !== undefined && n >= 1 && n < tried) return n
  return /page ?size|per page/i.test(message) && tried > 1 ? Math.floor(tried / 2) : undefined
}

type Fetched =
  | { readonly _tag: "End" }
  /**
   * A page after the first refused for its size (a 400 naming a page limit, or a limit learned while it waited): page
   * K of another size is not page K, so the walk goes on from the same record in the size the server takes.
   */
  | { readonly _tag: "Refused"; readonly message: string }
  | {
    readonly _tag: "Records"
    readonly records: ReadonlyArray<Record<string, unknown>>
    readonly more: boolean
    readonly total: number | undefined
    /** The page size asked for (after the caps). */
    readonly size: number
  }

type PagesOptions = ListOptions & { readonly resource?: Resource }

interface KeyOf {
  readonly key: (record: Record<string, unknown>) => string
  /** The records carry server ids, so distinct keys count distinct records. */
  readonly byId: boolean
}

/** What tells the records of a list apart: the server id when they carry one, else the whole record. */
const keyOfRecords = (resource: Resource | undefined): KeyOf => {
  const names = resource?.id === undefined ? [] : [...new Set([idReadName(resource)!, resource.id.name])]
  return {
    byId: names.length > 0,
    key: (record) => {
      for (const name of names) {
        const v = record[name]
        if (typeof v === "number" || typeof v === "string") return `id:${v}`
      }
      return JSON.stringify(record)
    }
  }
}

export const makePages = (settings: ClientSettings, get: Get, limits: PageLimits = new Map()) => {
  const failed = (path: string, reply: Reply, message: string) =>
    new ListFailed({ path, ...(reply.status !== undefined ? { status: reply.status } : {}), message })

  /** The page size a walk of `path` asking for `wanted` gets (what the server refused earlier caps it). */
  const sizeFor = (path: string, wanted: number) => Math.max(1, Math.min(wanted, limits.get(path) ?? wanted))

  /**
   * Where a walk continued after page `fromPage - 1` of pages of `before` records starts: in pages of `before` where
   * the list takes them (a continued walk asks what the interrupted one asked), else at the same record in pages of
   * `size` (capped by the resource table and by what the server refused this run), `skip` records of its first page
   * being already read. Page K of one size is not page K of another: asked as if it were, a walk continued after
   * tasks were capped at 100 a page re-read or skipped records.
   */
  const continuation = (
    path: string,
    resource: Resource | undefined,
    fromPage: number,
    before: number,
    size: number
  ) => {
    const cap = resource?.maxPageSize ?? resourceOfPath(path)?.maxPageSize
    const takes = (n: number) => sizeFor(path, cap !== undefined ? Math.min(n, cap) : n) === n
    if (fromPage <= 1 || takes(before)) return { page: fromPage, size: fromPage <= 1 ? size : before, skip: 0 }
    const offset = (fromPage - 1) * before
    const taken = sizeFor(path, size)
    return { page: Math.floor(offset / taken) + 1, size: taken, skip: offset % taken }
  }
  /** The largest page size each path answered this run. */
  const answered = new Map<string, number>()
  /**
   * A page of `wanted` records of `path` will not be refused for its size: the resource table caps it (tasks: 100,
   * tested live), or a page that large was answered this run. Until then a walk's first request is a page of that
   * size, so a page limit the server names is learned before other pages are asked in that size.
   */
  const settledSize = (path: string, wanted: number) => {
    const size = sizeFor(path, wanted)
    const cap = resourceOfPath(path)?.maxPageSize
    return (cap !== undefined && size <= cap) || size <= (answered.get(path) ?? 0)
  }

  const fetchPage = Effect.fn("Pages.fetch")(function*(
    path: string,
    filter: Readonly<Record<string, string | number | boolean>>,
    page: number,
    wanted: number,
    /** False where a 404 is expected and a wrong "end" costs nothing (the probe past a window's last page). */
    confirmEnd = true
  ) {
    while (true) {
      const pageSize = sizeFor(path, wanted)
      // A later page is asked in the walk's size or not at all: in another size it would hold other records.
      if (page > 1 && pageSize < wanted) {
        return { _tag: "Refused", message: `${path} holds at most ${pageSize} records a page` } as Fetched
      }
      // Always sent, `{}` when nothing is filtered: the live users and webhooks lists refuse a call without it (400).
      const query = { paramFilter: filter, page, pageSize }
      // A 404 answered while other requests were in flight has been asked again alone (`HttpAdapter`): it is the end.
      const reply = yield* get(path, query, !confirmEnd)
      if (reply.status === 400) {
        const limit = pageLimitOf(reply.error ?? "", pageSize)
        if (limit !== undefined) {
          limits.set(path, Math.min(limit, limits.get(path) ?? limit))
          yield* Effect.logDebug(`${path} holds at most ${limit} records a page (${reply.error}): asking for ${limit}`)
          // Page 1 starts at the same record whatever the size; a later page of a walk in pages of another size
          // does not, so the walk goes on from the record it reached in pages of the size now known.
          if (page === 1) continue
          return { _tag: "Refused", message: reply.error ?? "page size refused" } as Fetched
        }
      }
      if (reply.status === 404) return { _tag: "End" } as Fetched
      if (!reply.ok) return yield* failed(path, reply, reply.error ?? "list call failed")
      const list = listPage(reply.body)
      if (list === undefined) return yield* failed(path, reply, "the answer is not a list (no result.entityList)")
      if (list.records.length === 0) return { _tag: "End" } as Fetched
      // A server that caps the page size says so in pagedSearchReturnData; a page is short against that size.
      const served = list.pageSize !== undefined ? Math.min(list.pageSize, pageSize) : pageSize
      // `totalItems: 0` beside records (task types, one author's "bug in the API"): no next link is given either, so
      // the walk goes on until a short page.
      const linkless = list.total === 0
      // Answered, so not refused for its size (a server that caps silently says so in `pageSize`).
      if (served > (answered.get(path) ?? 0)) answered.set(path, served)
      const more = list.paged && list.records.length >= served && (list.nextLink !== false || linkless)
      return { _tag: "Records", records: list.records, more, total: list.total, size: pageSize } as Fetched
    }
  })

  /**
   * The pages of one filter from `fromPage` on; `first` is page `fromPage` when it was already fetched. A page after
   * the first refused for its size (the server's page limit fell while the list was walked, or a continued walk asks
   * the size its checkpoint recorded and the server no longer takes it) is not the end: the walk goes on from the
   * record it reached, in pages of the size now known, the records of that page already read left out.
   */
  const walk = (
    path: string,
    filter: Readonly<Record<string, string | number | boolean>>,
    pageSize: number,
    fromPage: number,
    window: Page["window"],
    first: Option.Option<Fetched>,
    keyOf: KeyOf,
    /** A page already asked ahead (a date window's known pages), else undefined. */
    asked: (page: number) => Effect.Effect<Fetched, ApiAborted | ListFailed> | undefined = () => undefined,
    /** Records of page `fromPage` already read (a walk continued in pages of another size): left out. */
    skip = 0
  ): Stream.Stream<Page, ApiAborted | ListFailed> =>
    Stream.suspend(() => {
      const seen = new Set<string>()
      /** `totalItems` of the walk's first page that gave one. */
      let firstTotal: number | undefined
      const shifted = (why: string) =>
        new ListFailed({
          reason: "Shifted",
          path,
          message:
            `the list changed while it was read (${why}): records were added or deleted before the page being read, so later pages moved and records that existed throughout may have been missed; walk it again`
        })
      /**
       * A whole, unfiltered walk of a list with ids must have met as many distinct records as its pages said it
       * holds. (Filtered and windowed walks are not held to it: a count the server gets wrong for a filter would
       * fail every lookup.)
       */
      const ended: Effect.Effect<void, ListFailed> = Effect.suspend(() =>
        fromPage === 1 && keyOf.byId && firstTotal !== undefined && seen.size < firstTotal
          ? Effect.fail(shifted(`${firstTotal} records by its count, ${seen.size} met by the walk`))
          : Effect.void
      )
      type Step = { readonly pages: Chunk.Chunk<Page>; readonly more: boolean }

      /** The pages from `start` on in pages of `size` (what the walk learns keeps the same `seen` and count). */
      const from = (
        start: number,
        size: number,
        skip: number,
        first: Option.Option<Fetched>,
        asked: (page: number) => Effect.Effect<Fetched, ApiAborted | ListFailed> | undefined
      ): Stream.Stream<Page, ApiAborted | ListFailed> => {
        /** The size this walk's pages hold: the first page's, once answered (page 1 takes a limit it meets). */
        let walkSize = size
        /** The page refused for its size, with the server's words: the walk goes on from its first record. */
        let refused: { readonly page: number; readonly message: string } | undefined
        const fetchAt = (page: number) => asked(page) ?? fetchPage(path, filter, page, walkSize)
        /** Takes the fetched page `page` into the walk, in page order: the repeat and shift checks, then its records. */
        const step = (page: number, fetched: Fetched): Effect.Effect<Step, ListFailed> => {
          if (fetched._tag === "End") return Effect.as(ended, { pages: Chunk.empty(), more: false })
          if (page === start && fetched._tag === "Records") walkSize = fetched.size
          if (fetched._tag === "Refused" || fetched.size !== walkSize) {
            refused = {
              page,
              message: fetched._tag === "Refused"
                ? fetched.message
                : `page ${page} came back in pages of ${fetched.size}`
            }
            return Effect.succeed({ pages: Chunk.empty(), more: false })
          }
          const records = page === start && skip > 0 ? fetched.records.slice(skip) : fetched.records
          const keys = records.map(keyOf.key)
          if (page > start && keys.length > 0 && keys.every((k) => seen.has(k))) {
            return new ListFailed({
              reason: "RepeatingPages",
              path,
              message:
                `page ${page} holds only records already listed on earlier pages (the API keeps answering the same records with a link to a next page); the list was stopped there`
            })
          }
          for (const k of keys) seen.add(k)
          // `totalItems: 0` beside records (task types) is no count.
          const total = fetched.total !== undefined && fetched.total > 0 ? fetched.total : undefined
          if (total !== undefined) {
            if (firstTotal === undefined) firstTotal = total
            else if (total !== firstTotal) {
              return shifted(`it held ${firstTotal} records when the walk began and ${total} at page ${page}`)
            }
          }
          return Effect.as(fetched.more ? Effect.void : ended, {
            pages: records.length === 0 ? Chunk.empty() : Chunk.of({
              page,
              size: fetched.size,
              records,
              ...(window ? { window } : {}),
              ...(fetched.total !== undefined ? { total: fetched.total } : {})
            }),
            more: fetched.more
          })
        }
        /** After a refused page: the same record on, in pages of the size the server takes. */
        const repaged: Stream.Stream<Page, ApiAborted | ListFailed> = Stream.suspend(() => {
          if (refused === undefined) return Stream.empty
          const smaller = sizeFor(path, walkSize)
          if (smaller >= walkSize) {
            return Stream.fail(new ListFailed({ path, message: `${refused.message} (page ${refused.page})` }))
          }
          const offset = (refused.page - 1) * walkSize + (refused.page === start ? skip : 0)
          return from(Math.floor(offset / smaller) + 1, smaller, offset % smaller, Option.none(), () => undefined)
        })
        /** One page at a time from `from` on, until a page says it is the last. */
        const oneByOne = (from: number): Stream.Stream<Page, ApiAborted | ListFailed> =>
          Stream.paginateChunkEffect(from, (page) =>
            Effect.map(
              Effect.flatMap(fetchAt(page), (fetched) => step(page, fetched)),
              (s): [Chunk.Chunk<Page>, Option.Option<number>] => [
                s.pages,
                s.more ? Option.some(page + 1) : Option.none()
              ]
            ))
        const opening = Option.isSome(first) ? Effect.succeed(first.value) : fetchAt(start)
        const pages = Stream.unwrap(Effect.map(
          Effect.flatMap(opening, (fetched) => Effect.map(step(start, fetched), (s) => ({ fetched, s }))),
          ({ fetched, s }) => {
            const head = Stream.fromChunk(s.pages)
            if (!s.more || fetched._tag !== "Records") return head
            // The pages the first page's `totalItems` says exist are fetched up to `concurrency` at once (a page of
            // the live service takes seconds) and taken in page order, so the walk reads exactly as one page at a
            // time; past them (a count that fell short, or none) the walk goes on one page at a time.
            const last = firstTotal === undefined ? start : Math.ceil(firstTotal / fetched.size)
            if (settings.concurrency <= 1 || last <= start + 1) return Stream.concat(head, oneByOne(start + 1))
            let more = true
            const ahead = Stream.range(start + 1, last).pipe(
              Stream.mapEffect(
                (page) => Effect.map(fetchAt(page), (f) => [page, f] as const),
                { concurrency: settings.concurrency }
              ),
              Stream.mapEffect(([page, f]) => step(page, f)),
              Stream.takeUntil((s) => !s.more),
              Stream.tap((s) => Effect.sync(() => (more = s.more))),
              Stream.flatMap((s) => Stream.fromChunk(s.pages))
            )
            return Stream.concat(
              Stream.concat(head, ahead),
              Stream.suspend(() => (more ? oneByOne(last + 1) : Stream.empty))
            )
          }
        ))
        return Stream.concat(pages, repaged)
      }
      return from(fromPage, pageSize, skip, first, asked)
    })

  /**
   * A date window's walk as it was resolved: a window that needs at most `maxWindowPages` pages (or a single day)
   * with its first page and the pages asked ahead, or the parts it was split into, in date order.
   */
  type Resolved =
    | {
      readonly _tag: "Window"
      readonly start: number
      readonly end: number
      /** The size its pages are asked in. */
      readonly size: number
      /** The first page when the probe was it, else none (it is in `asked`, or asked by the walk). */
      readonly first: Option.Option<Fetched>
      readonly asked: ReadonlyMap<number, Effect.Effect<Fetched, ApiAborted | ListFailed>>
    }
    | { readonly _tag: "Split"; readonly parts: ReadonlyArray<Effect.Effect<Resolved, ApiAborted | ListFailed>> }
    /** The window an interrupted walk continues in, from `fromPage`. */
    | { readonly _tag: "Continue"; readonly start: number; readonly end: number }

  const windowed = (
    path: string,
    options: PagesOptions,
    pageSize: number
  ): Stream.Stream<Page, ApiAborted | ListFailed> =>
    Stream.unwrapScoped(
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const sinceText = options.since ?? defaultSince
        const untilText = options.until ?? defaultUntil(now)
        const since = dayOf(sinceText)
        const until = dayOf(untilText)
        const fromPage = options.fromPage ?? 1
        const within = options.window === undefined || fromPage <= 1
          ? undefined
          : { start: dayOf(options.window.start), end: dayOf(options.window.end) }
        if (since === undefined || until === undefined) {
          return yield* new ListFailed({
            path,
            message: `since/until must be dates as yyyy-MM-dd (got "${sinceText}" and "${untilText}")`
          })
        }
        if (within !== undefined && (within.start === undefined || within.end === undefined)) {
          return yield* new ListFailed({
            path,
            message: `the window to continue in must be dates as yyyy-MM-dd (got ${JSON.stringify(options.window)})`
          })
        }
        const target = within?.start !== undefined && within.end !== undefined
          ? { start: within.start, end: within.end }
          : undefined
        if (fromPage > 1 && target === undefined) {
          return yield* new ListFailed({
            path,
            message: `a date-windowed walk continues in a window: page ${fromPage} needs the window (start and end)`
          })
        }
        const filter = options.filter ?? {}
        const windowFilter = (start: number, end: number) => ({
          ...filter,
          startDate: `${formatDay(start)}T00:00:00`,
          endDate: `${formatDay(end)}T23:59:59`
        })
        const keyOf = keyOfRecords(options.resource)
        const ahead = makeAhead(settings.concurrency, yield* Effect.scope)
        /**
         * The size the counted windows' pages are asked in, chosen from the first count (the whole range's, or what is
         * left of it when a walk is continued), so that its pages fill the last round of `concurrency` at once.
         */
        let filled: number | undefined

        /** `start..end` in `parts` consecutive windows of (nearly) equal days. */
        const split = (start: number, end: number, parts: number) => {
          const days = end - start + 1
          const n = Math.max(1, Math.min(parts, days))
          return Array.from({ length: n }, (_, i) => ({
            start: start + Math.floor((days * i) / n),
            end: start + Math.floor((days * (i + 1)) / n) - 1
          }))
        }

        /**
         * Asks what `start..end` holds (a probe, at its place in the reading order) and resolves it: the window fits
         * (its pages, as many as its count gives, are asked ahead at once), or it is split, its parts probed at once.
         * Where the page size is settled for the path (`settledSize`), the probe is a count call (`pageSize=1`: the
         * live service answers it in seconds where a page takes 12 s or more, api-notes) and no page of the window
         * is asked before its count is known; otherwise the probe is the window's first page, which also learns a
         * page limit the server names, and is kept unless the window is split.
         */
        const resolve = (start: number, end: number): Effect.Effect<Effect.Effect<Resolved, ApiAborted | ListFailed>> =>
          ahead.add(
            Effect.gen(function*() {
              const f = windowFilter(start, end)
              const asked = new Map<number, Effect.Effect<Fetched, ApiAborted | ListFailed>>()
              const holdsTarget = target !== undefined && start <= target.start && end >= target.end
              // A window holding the one an interrupted walk continues in: the walk continues in its window, and the
              // rest is found (split then, it fits now only when records were deleted since, or another version
              // chose the windows).
              const fits = function*(first: Option.Option<Fetched>) {
                if (!holdsTarget) return { _tag: "Window" as const, start, end, size: windowSize, first, asked }
                const rest = end > target!.end ? [yield* resolve(target!.end + 1, end)] : []
                return {
                  _tag: "Split" as const,
                  parts: [Effect.succeed<Resolved>({ _tag: "Continue", ...target! }), ...rest]
                }
              }
              const splitInto = (parts: number) =>
                Effect.map(
                  Effect.forEach(split(start, end, parts), (p) => plan(p.start, p.end)),
                  (parts): Resolved => ({ _tag: "Split", parts })
                )
              const counting = settledSize(path, pageSize)
              let windowSize = pageSize
              const opening = yield* fetchPage(path, f, 1, counting ? 1 : pageSize)
              const first = counting ? Option.none<Fetched>() : Option.some(opening)
              // (Page 1 is never refused for its size: it is asked again in the size the server names.)
              if (opening._tag !== "Records") return yield* fits(Option.some(opening))
              // The window's later pages are asked in its first page's size (a limit it met included).
              if (!counting) windowSize = opening.size
              if (!counting && (!opening.more || start === end)) return yield* fits(first)
              // The count settles it without asking for a page past the limit (`totalItems: 0` beside records, as
              // task types answer, is no count).
              if (opening.total !== undefined && opening.total > 0) {
                const size = counting ? sizeFor(path, pageSize) : opening.size
                const pages = Math.ceil(opening.total / size)
                // Chosen from the first count (the whole range's, before it is split): the pages of all its windows.
                if (counting) filled ??= fillingSize(opening.total, size, settings.maxWindowPages)
                if (pages > settings.maxWindowPages && start < end) {
                  return yield* splitInto(2 ** Math.ceil(Math.log2(pages / settings.maxWindowPages)))
                }
                if (holdsTarget) return yield* fits(first)
                if (counting) windowSize = filled ?? size
                const asking = counting ? Math.ceil(opening.total / windowSize) : pages
                for (let page = counting ? 1 : 2; page <= asking; page++) {
                  asked.set(
                    page,
                    yield* ahead.add(fetchPage(path, f, page, windowSize), {
                      group: start,
                      order: [start, page],
                      probe: false
                    })
                  )
                }
                return yield* fits(first)
              }
              // No count: the first page, and the page past the limit when it is full.
              const page1 = counting ? yield* fetchPage(path, f, 1, pageSize) : opening
              if (page1._tag !== "Records" || !page1.more || start === end) return yield* fits(Option.some(page1))
              windowSize = page1.size
              const beyond = yield* fetchPage(path, f, settings.maxWindowPages + 1, page1.size, false)
              return beyond._tag === "End" ? yield* fits(Option.some(page1)) : yield* splitInto(2)
            }),
            { group: start, order: [start, 0], probe: true }
          )

        /**
         * The windows of `start..end`, those of an interrupted walk's range skipped up to the window it continues in.
         * The checkpoint names that window (`target`) and the last page of it on disk: everything dated before it
         * is on disk, nothing dated after it. A window holding it is probed again (how it is split depends on what
         * it holds); one that holds only part of it (the windows were chosen otherwise: another version, or records
         * added or deleted since) leaves that part to the target's walk, which comes first where the target
         * starts, and resolves its days after the target afresh. So each record is written once, whatever chose the
         * windows before.
         */
        const plan = (start: number, end: number): Effect.Effect<Effect.Effect<Resolved, ApiAborted | ListFailed>> => {
          if (target === undefined || start > target.end) return resolve(start, end)
          if (end < target.start) return Effect.succeed(Effect.succeed({ _tag: "Split", parts: [] }))
          if (start === target.start && end === target.end) {
            return Effect.succeed(Effect.succeed({ _tag: "Continue", start, end }))
          }
          if (start <= target.start && end >= target.end) return resolve(start, end)
          const continued: ReadonlyArray<Effect.Effect<Resolved, ApiAborted | ListFailed>> = start <= target.start
            ? [Effect.succeed({ _tag: "Continue", ...target })]
            : []
          if (end <= target.end) return Effect.succeed(Effect.succeed({ _tag: "Split", parts: continued }))
          return Effect.map(resolve(target.end + 1, end), (after) =>
            Effect.succeed({ _tag: "Split", parts: [...continued, after] }))
        }
        /** The window an interrupted walk continues in, from the record it had reached. */
        const continued = (window: { readonly start: number; readonly end: number }) => {
          const at = continuation(path, options.resource, fromPage, options.fromPageSize ?? pageSize, pageSize)
          return walk(
            path,
            windowFilter(window.start, window.end),
            at.size,
            at.page,
            { start: formatDay(window.start), end: formatDay(window.end) },
            Option.none(),
            keyOf,
            undefined,
            at.skip
          )
        }
        /** The pages of a resolved window, in date order and page order. */
        const pagesOf = (
          resolving: Effect.Effect<Resolved, ApiAborted | ListFailed>
        ): Stream.Stream<Page, ApiAborted | ListFailed> =>
          Stream.unwrap(Effect.map(resolving, (resolved) =>
            resolved._tag === "Split"
              ? Stream.flatMap(Stream.fromIterable(resolved.parts), pagesOf)
              : resolved._tag === "Continue"
              ? continued(resolved)
              : walk(
                path,
                windowFilter(resolved.start, resolved.end),
                resolved.size,
                1,
                { start: formatDay(resolved.start), end: formatDay(resolved.end) },
                resolved.first,
                keyOf,
                (page) =>
                  resolved.asked.get(page)
              ).pipe(Stream.ensuring(ahead.drop(resolved.start)))))

        if (since > until) return Stream.empty
        // The whole range is counted first: a small list costs its count and its page, a large one is split at
        // once into as many windows as its count needs, each counted (a count takes a fraction of a page's time),
        // so every page of it is known, and asked within the in-flight limit, about one count after the start.
        return pagesOf(yield* plan(since, until))
      })
    )

  const unwindowed = (path: string, options: PagesOptions, pageSize: number) => {
    const at = continuation(path, options.resource, options.fromPage ?? 1, options.fromPageSize ?? pageSize, pageSize)
    return walk(
      path,
      options.filter ?? {},
      at.size,
      at.page,
      undefined,
      Option.none(),
      keyOfRecords(options.resource ?? resourceOfPath(path)),
      undefined,
      at.skip
    )
  }

  /**
   * The page size that fills the last round of a counted walk: `total` records in pages of at most `size` take
   * `ceil(total / size)` pages, asked `concurrency` at once; a last round only partly full leaves slots idle for a
   * whole page's time (51 pages of 100 at 8 at once: 7 rounds, the last of 3). So the pages are made as many as the
   * rounds hold (56 of 90), never larger than `size`, one page fewer per other window the count will be split into
   * (each window's last page may be short). A walk of at most one round keeps `size` (more pages would cost requests).
   */
  const fillingSize = (total: number, size: number, maxWindowPages: number) => {
    const pages = Math.ceil(total / size)
    const slots = Math.max(1, settings.concurrency)
    if (pages <= slots) return size
    const windows = pages > maxWindowPages ? 2 ** Math.ceil(Math.log2(pages / maxWindowPages)) : 1
    const room = Math.ceil(pages / slots) * slots - (windows - 1)
    return room > 0 ? Math.min(size, Math.ceil(total / room)) : size
  }

  return (path: string, options: PagesOptions = {}): Stream.Stream<Page, ApiAborted | ListFailed> => {
    const cap = (options.resource ?? resourceOfPath(path))?.maxPageSize
    const asked = options.pageSize ?? settings.pageSize
    const pageSize = cap !== undefined ? Math.min(asked, cap) : asked
    return options.resource?.dateWindow
      ? windowed(path, options, pageSize)
      : unwindowed(path, options, pageSize)
  }
}
