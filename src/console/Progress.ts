/**
 * Progress of a run on stderr: on a terminal a live bar (done/total, requests per minute, ETA, what the client
 * waits for), otherwise a plain line every few seconds; and the closing table of counts per status.
 *
 * Requests per minute are the requests of the budget's last window, scaled to a minute: the budget never lets
 * more than its limit into one window, so the figure never exceeds the budget's own per-minute figure shown next
 * to it. The ETA takes the slower of two estimates: the request budget (rows left × requests per row so far ÷ the
 * budget's rate) and the pace observed so far, plus what is left of a rate-limit pause.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { ApiStats, ClientActivity } from "../client/Api.js"
import { t } from "../Messages.js"
import type { Rate } from "../Units.js"
import type { ErrorKind } from "./ErrorKinds.js"
import { colourOn } from "./Terminal.js"

export interface Progress {
  /** The run's rows, and how many an earlier session already finished (resume). */
  readonly begin: (total: number, alreadyDone: number) => Effect.Effect<void>
  /** One more row finished. */
  readonly row: Effect.Effect<void>
  /** Stops the live line (clearing it on a terminal). */
  readonly end: Effect.Effect<void>
}

const noProgress: Progress = { begin: () => Effect.void, row: Effect.void, end: Effect.void }

/** A run's progress line (a service, provided by the command that starts the run). */
export class RunProgress extends Context.Tag("fsm-bulk/RunProgress")<RunProgress, Progress>() {
  /** No progress shown. */
  static readonly none: Layer.Layer<RunProgress> = Layer.succeed(RunProgress, noProgress)
}

/**
 * The progress lines of a run made of steps (an onboarding): one line per step, labelled by it (`[2/14] users`),
 * shown while the step's scope is open. By default none (tests, a fleet worker); the command provides `shown`.
 */
export class StepProgress extends Context.Reference<StepProgress>()("fsm-bulk/StepProgress", {
  defaultValue: (): { readonly step: (label: string) => Effect.Effect<Progress, never, Scope.Scope> } => ({
    step: () => Effect.succeed(noProgress)
  })
}) {
  /** Each step's line as `makeProgress` draws it, with these options. */
  static readonly shown = (options: Omit<ProgressOptions, "label">): Layer.Layer<StepProgress> =>
    Layer.succeed(StepProgress, { step: (label) => makeProgress({ ...options, label }) })
}

interface ProgressOptions {
  readonly label: string
  readonly stats?: Effect.Effect<ApiStats> | undefined
  /** What the client waits for, and its requests in the budget's last window (`Api.activity`). */
  readonly activity?: Effect.Effect<ClientActivity> | undefined
  /** The request budget, for the ETA and requests per minute. */
  readonly rate?: Rate | undefined
  /** Defaults to whether stderr is a terminal. */
  readonly tty?: boolean | undefined
  /** Between plain lines when not on a terminal. */
  readonly plainEveryMs?: number | undefined
  readonly write?: ((text: string) => void) | undefined
  /** The terminal's width (default: stderr's), which the live line never reaches. */
  readonly columns?: number | undefined
}

export const formatDuration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "?"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/** Milliseconds left: the slower of the budget's estimate and the pace so far. */
export const eta = (input: {
  readonly total: number
  readonly done: number
  readonly doneThisSession: number
  readonly elapsedMs: number
  readonly requests: number
  readonly rate: Rate | undefined
}): number => {
  const left = Math.max(0, input.total - input.done)
  if (left === 0) return 0
  const pace = input.doneThisSession > 0 ? (input.elapsedMs / input.doneThisSession) * left : Number.POSITIVE_INFINITY
  if (input.rate === undefined) return pace
  const perRow = input.doneThisSession > 0 ? Math.max(1, input.requests / input.doneThisSession) : 1
  const budget = ((left * perRow) / input.rate.limit) * input.rate.windowMs
  return Number.isFinite(pace) ? Math.max(pace, budget) : budget
}

/** Requests per minute of `inWindow` requests in one window of `rate` (rounded as the budget's own figure). */
const perMinute = (inWindow: number, rate: Rate): number => Math.round((inWindow * 60_000) / rate.windowMs)

/** `12:03:10`, on this machine's clock. */
const clockTime = (ms: number): string => new Date(ms).toTimeString().slice(0, 8)

/** What the run waits for, in words; nothing while requests are simply being sent. */
const waitingFor = (activity: ClientActivity): string | undefined => {
  switch (activity.state) {
    case "logging-in":
      return t("progress.loggingIn")
    case "paused":
      return t("progress.paused", { time: clockTime(activity.pausedUntil ?? 0) })
    case "waiting-budget":
      return t("progress.waitingBudget")
    case "sending":
      return undefined
  }
}

const bar = (fraction: number, width = 24): string => {
  const full = Math.round(Math.min(1, Math.max(0, fraction)) * width)
  return `${"█".repeat(full)}${"░".repeat(width - full)}`
}

/** The characters a live line may take: less than the terminal's width. */
const widthOf = (columns: number | undefined) => Math.max(20, (columns ?? process.stderr.columns ?? 80) - 1)

/** The live line, its bar left out when the line would not fit the terminal with it. */
const barLine = (label: string, drawn: string | undefined, rest: string, columns: number | undefined): string => {
  const full = drawn !== undefined ? `${label} ${drawn} ${rest}` : `${label} ${rest}`
  return [...full].length <= widthOf(columns) ? full : `${label}: ${rest}`
}

/**
 * What one drawing of the line writes: on a terminal the line is redrawn in place, cut to less than the
 * terminal's width (a line that wraps leaves its first part behind at every redraw: tmux, narrow windows);
 * otherwise a line of its own.
 */
const redraw = (tty: boolean, columns: number | undefined, text: string): string => {
  if (!tty) return `${text}\n`
  const width = widthOf(columns)
  const chars = [...text]
  return `\r\x1b[2K${chars.length > width ? `${chars.slice(0, width - 1).join("")}…` : text}`
}

export const makeProgress = Effect.fn("Progress.make")(function*(options: ProgressOptions) {
  const tty = options.tty ?? colourOn(process.stderr) // a live bar needs escapes: not with NO_COLOR, TERM=dumb
  const write = options.write ?? ((text: string) => void process.stderr.write(text))
  let total = 0
  let done = 0
  let startDone = 0
  let startedAt = 0
  let startRequests = 0
  let fiber: Fiber.RuntimeFiber<unknown> | undefined
  const line = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const elapsed = Math.max(1, now - startedAt)
    const requests = options.stats !== undefined ? (yield* options.stats).requests - startRequests : 0
    const activity = options.activity !== undefined ? yield* options.activity : undefined
    const paused = activity?.state === "paused" ? Math.max(0, (activity.pausedUntil ?? now) - now) : 0
    const estimate = eta({
      total,
      done,
      doneThisSession: done - startDone,
      elapsedMs: elapsed,
      requests,
      rate: options.rate
    })
    const left = estimate > 0 ? estimate + paused : 0
    const pct = total > 0 ? Math.floor((done / total) * 100) : 100
    const parts = [t("progress.rows", { done, total }), `${pct}%`]
    // What the run waits for comes before the figures, so a narrow terminal that cuts the line still shows it.
    const waiting = activity !== undefined ? waitingFor(activity) : undefined
    if (waiting !== undefined) parts.push(waiting)
    if (activity !== undefined && options.rate !== undefined) {
      parts.push(
        t("progress.perMinute", {
          now: perMinute(activity.inWindow, options.rate),
          limit: perMinute(options.rate.limit, options.rate)
        })
      )
    }
    parts.push(t("progress.eta", { time: formatDuration(left) }))
    return tty
      ? barLine(options.label, bar(total > 0 ? done / total : 1), parts.join(" · "), options.columns)
      : `${options.label}: ${parts.join(", ")}`
  })

  const render = Effect.flatMap(line, (text) => Effect.sync(() => write(redraw(tty, options.columns, text))))

  const begin = (rows: number, alreadyDone: number) =>
    Effect.gen(function*() {
      total = rows
      done = alreadyDone
      startDone = alreadyDone
      startedAt = yield* Clock.currentTimeMillis
      startRequests = options.stats !== undefined ? (yield* options.stats).requests : 0
      const every = tty ? Duration.millis(250) : Duration.millis(options.plainEveryMs ?? 5_000)
      fiber = yield* Effect.forkDaemon(
        Effect.repeat(Effect.delay(render, every), Schedule.forever)
      )
    })

  const end = Effect.suspend(() => {
    const f = fiber
    fiber = undefined
    if (f === undefined) return Effect.void
    return Effect.zipRight(Fiber.interrupt(f), tty ? Effect.sync(() => write("\r\x1b[2K")) : Effect.void)
  })

  yield* Effect.addFinalizer(() => end)

  return {
    begin,
    row: Effect.sync(() => void (done += 1)),
    end
  } satisfies Progress
})

/** Progress of an offline read (`validate`): rows read so far, and how far into the file when that is known. */
export interface ReadProgress {
  /** `rows` more rows were read, about `bytes` of the file. */
  readonly read: (rows: number, bytes: number) => Effect.Effect<void>
  /** Stops the live line (clearing it on a terminal). */
  readonly end: Effect.Effect<void>
}

interface ReadProgressOptions extends Pick<ProgressOptions, "label" | "tty" | "plainEveryMs" | "write" | "columns"> {
  /** The file's size, when the bytes of the rows tell how far the read is (CSV; not a compressed workbook). */
  readonly totalBytes?: number | undefined
}

const noReadProgress: Pick<ReadProgress, "read"> = { read: () => Effect.void }

/**
 * The live line of a run that reads a file without sending (`validate`), told of the rows as they are read: a
 * service, so that the command chooses (`makeReadProgress` on stderr) and a run started elsewhere (a fleet's
 * submit, a test) shows none by default.
 */
export class FileReadProgress extends Context.Reference<FileReadProgress>()("fsm-bulk/FileReadProgress", {
  defaultValue: (): Pick<ReadProgress, "read"> => noReadProgress
}) {
  /** The rows told to `progress` (the command ends its line). */
  static readonly to = (progress: Pick<ReadProgress, "read">): Layer.Layer<FileReadProgress> =>
    Layer.succeed(FileReadProgress, progress)
  /** Whether a line is shown at all: a run that shows none need not count the rows' bytes. */
  static readonly shown = (progress: Pick<ReadProgress, "read">): boolean => progress !== noReadProgress
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

/**
 * The live line of a read: `validate customers: 120000 rows read, ~35% of 80.0 MiB, ETA 12s` (the share is
 * counted from the rows' text, so it is approximate). It starts with the first row and is drawn from a fiber,
 * like the run's line; a read that ends before the first plain line prints none.
 */
export const makeReadProgress = Effect.fn("Progress.makeRead")(function*(options: ReadProgressOptions) {
  const tty = options.tty ?? process.stderr.isTTY === true
  const write = options.write ?? ((text: string) => void process.stderr.write(text))
  const total = options.totalBytes !== undefined && options.totalBytes > 0 ? options.totalBytes : undefined
  let rows = 0
  let bytes = 0
  let startedAt = 0
  let fiber: Fiber.RuntimeFiber<unknown> | undefined
  let ended = false

  const line = Effect.map(Clock.currentTimeMillis, (now) => {
    const parts = [t("progress.rowsRead", { rows })]
    // A workbook's rows tell no bytes: its share is not shown.
    const known = total !== undefined && bytes > 0 ? total : undefined
    if (known !== undefined) {
      const share = Math.min(1, bytes / known)
      parts.push(t("progress.shareOf", { percent: Math.floor(share * 100), size: megabytes(known) }))
      const elapsed = now - startedAt
      if (share > 0 && elapsed > 0) {
        parts.push(t("progress.eta", { time: formatDuration((elapsed / share) * (1 - share)) }))
      }
    }
    return tty
      ? barLine(options.label, known !== undefined ? bar(bytes / known) : undefined, parts.join(" · "), options.columns)
      : `${options.label}: ${parts.join(", ")}`
  })
  const render = Effect.flatMap(line, (text) => Effect.sync(() => write(redraw(tty, options.columns, text))))

  const start = Effect.gen(function*() {
    startedAt = yield* Clock.currentTimeMillis
    const every = tty ? Duration.millis(250) : Duration.millis(options.plainEveryMs ?? 5_000)
    fiber = yield* Effect.forkDaemon(Effect.repeat(Effect.delay(render, every), Schedule.forever))
  })

  const end = Effect.suspend(() => {
    ended = true
    const f = fiber
    fiber = undefined
    if (f === undefined) return Effect.void
    return Effect.zipRight(Fiber.interrupt(f), tty ? Effect.sync(() => write("\r\x1b[2K")) : Effect.void)
  })

  yield* Effect.addFinalizer(() => end)

  return {
    read: (n: number, b: number) =>
      Effect.suspend(() => {
        rows += n
        bytes += b
        return fiber === undefined && !ended ? start : Effect.void
      }),
    end
  } satisfies ReadProgress
})

/** The closing table: one line per status with rows, then the totals. */
export const summaryTable = (
  title: string,
  counts: Readonly<Record<string, number>>,
  extra: ReadonlyArray<readonly [string, string | number]>
): ReadonlyArray<string> => {
  const rows = Object.entries(counts).filter(([, n]) => n > 0)
  const width = Math.max(8, ...rows.map(([s]) => s.length), ...extra.map(([k]) => k.length))
  const numWidth = Math.max(1, ...rows.map(([, n]) => String(n).length), ...extra.map(([, v]) => String(v).length))
  return [
    title,
    ...rows.map(([s, n]) => `  ${s.padEnd(width)}  ${String(n).padStart(numWidth)}`),
    ...extra.map(([k, v]) => `  ${k.padEnd(width)}  ${String(v).padStart(numWidth)}`)
  ]
}

const shorten = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** Kinds of error the closing lines list; the others are counted in one line. */
export const kindsShown = 5

/**
 * The closing lines that say what went wrong: the most frequent kinds of error (rows first), one example row
 * each, prefixed by where it is (`customers ` in an onboarding), then how many kinds more and where to see them.
 */
export const wentWrong = (
  kinds: ReadonlyArray<{ readonly kind: ErrorKind; readonly where?: string | undefined }>,
  seeAlso: string
): ReadonlyArray<string> => {
  if (kinds.length === 0) return []
  const shown = [...kinds].sort((a, b) => b.kind.count - a.kind.count).slice(0, kindsShown)
  const width = Math.max(...shown.map((k) => String(k.kind.count).length))
  const lines = [t("wrong.title")]
  for (const { kind, where } of shown) {
    const example = kind.examples[0]
    const text = example === undefined ? kind.kind : t("wrong.example", { row: example.row, error: example.error })
    lines.push(`  ${String(kind.count).padStart(width)}  ${shorten(`${where ?? ""}${text}`, 110)}`)
  }
  const more = kinds.length - shown.length
  if (more > 0) lines.push(t(more === 1 ? "wrong.moreKind" : "wrong.moreKinds", { count: more, where: seeAlso }))
  return lines
}
