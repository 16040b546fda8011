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
 * later walk of that path; the first page is asked again at once.
 *
 * Date-windowed resources (tasks, deleted tasks, expenses, tickets) need `startDate`/`endDate` in
 * `paramFilter`; they are walked in windows of 2^k days from `since` to `until`. The window starting at a day
 * is always the largest one that needs at most `maxWindowPages` pages, so it depends only on its start, `until`
 * and the data: an interrupted export resumes with `since` = the window's start and `fromPage`.
 *
 * Pages are fetched ahead, up to the client's `concurrency` at once (a page of the live service takes seconds): the
 * pages after the first up to the count its `totalItems` gives, taken in page order, so a walk yields exactly what
 * a walk one page at a time yields and its checkpoints stay in order. Past that count (or with none) a walk goes on
 * one page at a time, so a wrong count costs time, never a page asked past the end.
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
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { dayOf, defaultSince, defaultUntil, formatDay } from "../Days.js"
import { idReadName, type Resource } from "../Resources.js"
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

  const fetchPage = Effect.fn("Pages.fetch")(function*(
    path: string,
    filter: Readonly<Record<string, string | number | boolean>>,
    page: number,
    wanted: number,
    /** False where a 404 is expected and a wrong "end" costs nothing (the probe past a window's last page). */
    confirmEnd = true
  ) {
    while (true) {
      const pageSize = Math.max(1, Math.min(wanted, limits.get(path) ?? wanted))
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
          // does not, so that walk stops (a run again uses the size now known).
          if (page === 1) continue
          return yield* failed(
            path,
            reply,
            `${
              reply.error ?? "page size refused"
            } (page ${page} of a walk in pages of ${pageSize}; run again: pages of ${limit} are used from now on)`
          )
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
      const more = list.paged && list.records.length >= served && (list.nextLink !== false || linkless)
      return { _tag: "Records", records: list.records, more, total: list.total, size: pageSize } as Fetched
    }
  })

  /** The pages of one filter from `fromPage` on; `first` is page `fromPage` when it was already fetched. */
  const walk = (
    path: string,
    filter: Readonly<Record<string, string | number | boolean>>,
    pageSize: number,
    fromPage: number,
    window: Page["window"],
    first: Option.Option<Fetched>,
    keyOf: KeyOf
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
      /** Takes the fetched page `page` into the walk, in page order: the repeat and shift checks, then its records. */
      const step = (page: number, fetched: Fetched): Effect.Effect<Step, ListFailed> => {
        if (fetched._tag === "End") return Effect.as(ended, { pages: Chunk.empty(), more: false })
        const keys = fetched.records.map(keyOf.key)
        if (page > fromPage && keys.every((k) => seen.has(k))) {
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
          pages: Chunk.of({
            page,
            records: fetched.records,
            ...(window ? { window } : {}),
            ...(fetched.total !== undefined ? { total: fetched.total } : {})
          }),
          more: fetched.more
        })
      }
      /** One page at a time from `from` on, until a page says it is the last. */
      const oneByOne = (from: number): Stream.Stream<Page, ApiAborted | ListFailed> =>
        Stream.paginateChunkEffect(from, (page) =>
          Effect.map(
            Effect.flatMap(fetchPage(path, filter, page, pageSize), (fetched) => step(page, fetched)),
            (s): [Chunk.Chunk<Page>, Option.Option<number>] => [s.pages, s.more ? Option.some(page + 1) : Option.none()]
          ))
      const opening = Option.isSome(first) ? Effect.succeed(first.value) : fetchPage(path, filter, fromPage, pageSize)
      return Stream.unwrap(Effect.map(
        Effect.flatMap(opening, (fetched) => Effect.map(step(fromPage, fetched), (s) => ({ fetched, s }))),
        ({ fetched, s }) => {
          const head = Stream.fromChunk(s.pages)
          if (!s.more || fetched._tag === "End") return head
          // The pages the first page's `totalItems` says exist are fetched up to `concurrency` at once (a page of
          // the live service takes seconds) and taken in page order, so the walk reads exactly as one page at a
          // time; past them (a count that fell short, or none) the walk goes on one page at a time.
          const last = firstTotal === undefined ? fromPage : Math.ceil(firstTotal / fetched.size)
          if (settings.concurrency <= 1 || last <= fromPage + 1) return Stream.concat(head, oneByOne(fromPage + 1))
          let more = true
          const ahead = Stream.range(fromPage + 1, last).pipe(
            Stream.mapEffect(
              (page) => Effect.map(fetchPage(path, filter, page, pageSize), (f) => [page, f] as const),
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
    })

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
        if (since === undefined || until === undefined) {
          return yield* new ListFailed({
            path,
            message: `since/until must be dates as yyyy-MM-dd (got "${sinceText}" and "${untilText}")`
          })
        }
        const filter = options.filter ?? {}
        const windowFilter = (start: number, end: number) => ({
          ...filter,
          startDate: `${formatDay(start)}T00:00:00`,
          endDate: `${formatDay(end)}T23:59:59`
        })
        const endOf = (x: number, k: number) => Math.min(until, x + 2 ** k - 1)
        const topK = (x: number) => Math.max(0, Math.ceil(Math.log2(until - x + 1)))

        /** Whether the window of 2^k days at `x` needs at most `maxWindowPages` pages, with its first page. */
        const probe = Effect.fn("Pages.probe")(function*(x: number, k: number) {
          const f = windowFilter(x, endOf(x, k))
          const first = yield* fetchPage(path, f, 1, pageSize)
          if (first._tag === "End" || !first.more) return { fits: true, first }
          // The count on the first page settles it without asking for a page past the limit (`totalItems: 0` beside
          // records, as task types answer, is no count).
          if (first.total !== undefined && first.total > 0) {
            return { fits: Math.ceil(first.total / first.size) <= settings.maxWindowPages, first }
          }
          const beyond = yield* fetchPage(path, f, settings.maxWindowPages + 1, pageSize, false)
          return { fits: beyond._tag === "End", first }
        })

        /** The largest window at `x` that fits, searched from `hint` up or down. */
        const choose = Effect.fn("Pages.chooseWindow")(function*(x: number, hint: number) {
          const top = topK(x)
          let k = Math.min(hint, top)
          // The hint is one size wider than the window before, which a list of even density does not fit: the size
          // below it is probed at the same time, so a slow service costs one page latency per window, not two.
          const [hinted, below] = k > 0
            ? yield* Effect.all([probe(x, k), probe(x, k - 1)], { concurrency: 2 })
            : [yield* probe(x, k), undefined]
          let probed = hinted
          if (!hinted.fits && below !== undefined) {
            // The size below is where the search down goes on (wider ones do not fit).
            k -= 1
            probed = below
          }
          if (hinted.fits) {
            while (k < top) {
              const wider = yield* probe(x, k + 1)
              if (!wider.fits) break
              k += 1
              probed = wider
            }
          } else {
            while (!probed.fits && k > 0) {
              k -= 1
              probed = yield* probe(x, k)
            }
          }
          return { start: x, end: endOf(x, k), k, first: probed.first }
        })

        if (since > until) return Stream.empty
        const plans = Stream.paginateEffect({ x: since, hint: topK(since), fromPage: options.fromPage ?? 1 }, (state) =>
          Effect.map(choose(state.x, state.hint), (plan) =>
            [
              { ...plan, fromPage: state.fromPage },
              plan.end >= until ? Option.none() : Option.some({ x: plan.end + 1, hint: plan.k + 1, fromPage: 1 })
            ] as const))
        // A window's walk starts as soon as it is chosen, into a queue of a few pages, and the next window is
        // chosen meanwhile: the pages of the next window are asked while the current one's are still written, within
        // the client's in-flight limit. The pages are read out window after window, in page order.
        const scope = yield* Effect.scope
        return plans.pipe(
          Stream.mapEffect((plan) =>
            Scope.extend(
              Stream.toQueue(
                walk(
                  path,
                  windowFilter(plan.start, plan.end),
                  pageSize,
                  plan.fromPage,
                  { start: formatDay(plan.start), end: formatDay(plan.end) },
                  plan.fromPage === 1 ? Option.some(plan.first) : Option.none(),
                  keyOfRecords(options.resource)
                ),
                { capacity: Math.max(1, settings.concurrency) }
              ),
              scope
            )
          ),
          Stream.buffer({ capacity: 1 }),
          Stream.flatMap((queue) =>
            Stream.flattenTake(Stream.fromQueue(queue))
          )
        )
      })
    )

  return (path: string, options: PagesOptions = {}): Stream.Stream<Page, ApiAborted | ListFailed> => {
    const cap = (options.resource ?? resourceOfPath(path))?.maxPageSize
    const asked = options.pageSize ?? settings.pageSize
    const pageSize = cap !== undefined ? Math.min(asked, cap) : asked
    return options.resource?.dateWindow
      ? windowed(path, options, pageSize)
      : walk(
        path,
        options.filter ?? {},
        pageSize,
        options.fromPage ?? 1,
        undefined,
        Option.none(),
        keyOfRecords(options.resource ?? resourceOfPath(path))
      )
  }
}
