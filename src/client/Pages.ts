/**
 * Walking list calls. A 404 on a list means "no (more) records" (api-notes B), `totalItems` is not trusted,
 * and a walk stops on a short page or an answer whose `links` lack `nextPage`. Bare-array answers (legacy
 * lists) are one page.
 *
 * Date-windowed resources (tasks, deleted tasks, expenses, tickets) need `startDate`/`endDate` in
 * `paramFilter`; they are walked in windows of 2^k days from `since` to `until`. The window starting at a day
 * is always the largest one that needs at most `maxWindowPages` pages, so it depends only on its start, `until`
 * and the data: an interrupted export resumes with `since` = the window's start and `fromPage`.
 *
 * A page whose records were all seen on earlier pages of the same walk stops it with `ListFailed`: a server that
 * ignores `page` and keeps sending a full page with a `nextPage` link would otherwise be walked forever. (One
 * repeated record is not enough: a record inserted while the list is walked shifts the next page by one.)
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { dayOf, defaultSince, defaultUntil, formatDay } from "../Days.js"
import { idReadName, type Resource } from "../Resources.js"
import type { ApiAborted, ListOptions, Page, Reply } from "./Api.js"
import { ListFailed } from "./Api.js"
import { listPage } from "./Body.js"
import type { ClientSettings } from "./Config.js"
import { resourceOfPath } from "./Reconcile.js"

export type Get = (
  path: string,
  query: Readonly<Record<string, string | number | object | undefined>>
) => Effect.Effect<Reply, ApiAborted>

type Fetched =
  | { readonly _tag: "End" }
  | {
    readonly _tag: "Records"
    readonly records: ReadonlyArray<Record<string, unknown>>
    readonly more: boolean
    readonly total: number | undefined
  }

export type PagesOptions = ListOptions & { readonly resource?: Resource }

type KeyOf = (record: Record<string, unknown>) => string

/** What tells the records of a list apart: the server id when they carry one, else the whole record. */
const keyOfRecords = (resource: Resource | undefined): KeyOf => {
  const names = resource?.id === undefined ? [] : [...new Set([idReadName(resource)!, resource.id.name])]
  return (record) => {
    for (const name of names) {
      const v = record[name]
      if (typeof v === "number" || typeof v === "string") return `id:${v}`
    }
    return JSON.stringify(record)
  }
}

export const makePages = (settings: ClientSettings, get: Get) => {
  const fetchPage = Effect.fn("Pages.fetch")(function*(
    path: string,
    filter: Readonly<Record<string, string | number | boolean>>,
    page: number,
    pageSize: number
  ) {
    // Always sent, `{}` when nothing is filtered: the live users and webhooks lists refuse a call without it (400).
    const query = { paramFilter: filter, page, pageSize }
    const reply = yield* get(path, query)
    if (reply.status === 404) return { _tag: "End" } as Fetched
    if (!reply.ok) {
      return yield* new ListFailed({
        path,
        ...(reply.status !== undefined ? { status: reply.status } : {}),
        message: reply.error ?? "list call failed"
      })
    }
    const list = listPage(reply.body)
    if (list === undefined) {
      return yield* new ListFailed({
        path,
        ...(reply.status !== undefined ? { status: reply.status } : {}),
        message: "the answer is not a list (no result.entityList)"
      })
    }
    if (list.records.length === 0) return { _tag: "End" } as Fetched
    // A server that caps the page size says so in pagedSearchReturnData; a page is short against that size.
    const served = list.pageSize !== undefined ? Math.min(list.pageSize, pageSize) : pageSize
    const more = list.paged && list.records.length >= served && list.nextLink !== false
    return { _tag: "Records", records: list.records, more, total: list.total } as Fetched
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
      return Stream.paginateChunkEffect(fromPage, (page) =>
        Effect.flatMap(
          page === fromPage && Option.isSome(first)
            ? Effect.succeed(first.value)
            : fetchPage(path, filter, page, pageSize),
          (fetched): Effect.Effect<[Chunk.Chunk<Page>, Option.Option<number>], ListFailed> => {
            if (fetched._tag === "End") return Effect.succeed([Chunk.empty(), Option.none()])
            const keys = fetched.records.map(keyOf)
            if (page > fromPage && keys.every((k) => seen.has(k))) {
              return new ListFailed({
                reason: "RepeatingPages",
                path,
                message:
                  `page ${page} holds only records already listed on earlier pages (the API keeps answering the same records with a link to a next page); the list was stopped there`
              })
            }
            for (const k of keys) seen.add(k)
            return Effect.succeed([
              Chunk.of({
                page,
                records: fetched.records,
                ...(window ? { window } : {}),
                ...(fetched.total !== undefined ? { total: fetched.total } : {})
              }),
              fetched.more ? Option.some(page + 1) : Option.none()
            ])
          }
        ))
    })

  const windowed = (
    path: string,
    options: PagesOptions,
    pageSize: number
  ): Stream.Stream<Page, ApiAborted | ListFailed> =>
    Stream.unwrap(
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
          const beyond = yield* fetchPage(path, f, settings.maxWindowPages + 1, pageSize)
          return { fits: beyond._tag === "End", first }
        })

        /** The largest window at `x` that fits, searched from `hint` up or down. */
        const choose = Effect.fn("Pages.chooseWindow")(function*(x: number, hint: number) {
          const top = topK(x)
          let k = Math.min(hint, top)
          let probed = yield* probe(x, k)
          if (probed.fits) {
            while (k < top) {
              const wider = yield* probe(x, k + 1)
              if (!wider.fits) break
              k += 1
              probed = wider
            }
          } else {
            while (k > 0) {
              k -= 1
              probed = yield* probe(x, k)
              if (probed.fits) break
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
        return Stream.flatMap(plans, (plan) =>
          walk(
            path,
            windowFilter(plan.start, plan.end),
            pageSize,
            plan.fromPage,
            { start: formatDay(plan.start), end: formatDay(plan.end) },
            plan.fromPage === 1 ? Option.some(plan.first) : Option.none(),
            keyOfRecords(options.resource)
          ))
      })
    )

  return (path: string, options: PagesOptions = {}): Stream.Stream<Page, ApiAborted | ListFailed> => {
    const pageSize = options.pageSize ?? settings.pageSize
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
