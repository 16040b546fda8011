/**
 * `report.html`: one self-contained page per run directory (no script, no network, opens from disk) that says how
 * the run went: counts by status, errors by kind with example rows, sends per minute against the budget, how long
 * rows took and how often they were retried, the slowest rows with their `X-Request-Id`, and for an onboarding one
 * line per step. Charts are inline SVG. Figures carry `data-figure` attributes so tests (and scripts) can read them.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { writeFileAtomic } from "../files/Write.js"
import { countedSheets, currentLanguage, howMapped, t } from "../Messages.js"
import { shellQuote } from "../Shell.js"
import { endedWell, plannedStatuses, shownStatus, type Status } from "../Status.js"
import { readRunData, type RunData } from "./RunData.js"

const reportHtml = "report.html"

const escape = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** A number as the page's language writes it: 1,234.5 in English, 1.234,5 in Portuguese. */
const fmt = (n: number): string => n.toLocaleString(currentLanguage() === "pt-BR" ? "pt-BR" : "en-US")

/** A moment of summary.json (ISO 8601, UTC) as the page's language writes it: as it is in English, `27/11/2026 22:55:01 UTC` in Portuguese. */
const moment = (iso: string): string => {
  const at = Date.parse(iso)
  if (currentLanguage() !== "pt-BR" || Number.isNaN(at)) return iso
  const two = (n: number) => String(n).padStart(2, "0")
  const d = new Date(at)
  return `${two(d.getUTCDate())}/${two(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${d.toISOString().slice(11, 19)} UTC`
}

const planned: ReadonlySet<string> = new Set(Object.values(plannedStatuses))

/** The same traffic lights as report.xlsx: ended well, needs a look, did not happen; and a dry run's plan. */
const tone = (status: string): "good" | "warn" | "bad" | "plan" | "none" => {
  if (planned.has(status)) return "plan"
  switch (status) {
    case "created":
    case "updated":
    case "unchanged":
    case "deleted":
    case "queued":
    case "confirmed":
    case "valid":
      return "good"
    case "unconfirmed":
    case "skipped":
    case "in-doubt":
    case "conflict":
      return "warn"
    case "failed":
    case "invalid":
      return "bad"
    default:
      return "none"
  }
}

const colours = { good: "#2e7d32", warn: "#b26a00", bad: "#c62828", plan: "#1f4e78", none: "#607d8b" } as const

/** What a dry run's page says of itself (kept together for the message catalogue). */
const rehearsal = {
  title: () => t("report.dryRun"),
  banner: () => t("report.dryRunBanner"),
  verdict: (code: number) =>
    code === 0 ? t("report.wouldEndWell") : code === 1 ? t("report.wouldNotEndWell") : exitMeaning(code),
  mode: () => t("report.dryRunMode")
} as const

const exitMeanings = ["report.exit0", "report.exit1", "report.exit2", "report.exit3"] as const

const exitMeaning = (code: number): string => {
  const key = exitMeanings[code]
  return key === undefined ? "" : t(key)
}

/** A table's column names, kept in the catalogue as one `a|b|c` message. */
const headings = (text: string): Array<string> => text.split("|")

const duration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "—"
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${s % 60} s`
  return `${Math.floor(m / 60)} h ${m % 60} min`
}

/** 100 → "0.1 s", 2500 → "2.5 s" ("2,5 s" in Portuguese), 60000 → "1 min". */
const msLabel = (ms: number): string =>
  ms >= 60_000 && ms % 60_000 === 0 ? `${fmt(ms / 60_000)} min` : `${fmt(ms / 1000)} s`

const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19)

/** Horizontal bars, one per label. */
const barList = (
  items: ReadonlyArray<
    { readonly label: string; readonly value: number; readonly colour: string; readonly figure?: string }
  >
): string => {
  const max = Math.max(1, ...items.map((i) => i.value))
  const rowH = 22
  const width = 520
  const labelW = 110
  const bars = items
    .map((item, i) => {
      const w = Math.max(item.value > 0 ? 2 : 0, Math.round(((width - labelW - 70) * item.value) / max))
      const y = i * rowH
      return `<g transform="translate(0,${y})"><text x="${labelW - 8}" y="15" text-anchor="end">${
        escape(item.label)
      }</text>` +
        `<rect x="${labelW}" y="3" width="${w}" height="15" fill="${item.colour}" rx="2"/>` +
        `<text x="${labelW + w + 6}" y="15"${
          item.figure !== undefined ? ` data-figure="${escape(item.figure)}"` : ""
        }>${fmt(item.value)}</text></g>`
    })
    .join("")
  return `<svg class="chart" role="img" width="${width}" height="${items.length * rowH + 4}" viewBox="0 0 ${width} ${
    items.length * rowH + 4
  }">${bars}</svg>`
}

/** Axis steps of 1, 2 or 5 × 10ⁿ: at most five intervals up to `max` (so 5 sends read 0 1 2 3 4 5, not 0 1 3 4 6). */
const niceTicks = (max: number): ReadonlyArray<number> => {
  const rough = Math.max(1, max) / 5
  const power = 10 ** Math.floor(Math.log10(rough))
  // Sends are whole numbers: never a step below 1.
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((m) => m >= rough)!)
  const ticks: Array<number> = []
  for (let v = 0; v <= max + step / 2; v += step) ticks.push(Math.round(v * 1e6) / 1e6)
  return ticks
}

/** The chart's words (kept together for the message catalogue). */
const chartText = {
  budget: (limit: number, windowMs: number) => t("chart.budget", { limit: fmt(limit), window: msLabel(windowMs) }),
  offScale: (limit: number, windowMs: number) => t("chart.offScale", { limit: fmt(limit), window: msLabel(windowMs) }),
  offScaleNote: (peak: number) => t("chart.offScaleNote", { peak: fmt(peak) })
} as const

/**
 * How many attempts were sent in the budget's window ending at each moment (the quantity the budget limits:
 * `400/60s` means at most 400 in any 60 s), with each session's own limit as a dashed line over the time it ran (a
 * resume may have been given another `--rate`). The scale fits the sends: a limit far above them is named at the top
 * instead of flattening the bars to nothing. Without a recorded budget, 60 s windows.
 */
const windowChart = (data: RunData): string => {
  if (data.buckets.length === 0) return `<p class="muted">${escape(t("report.noRequestSent"))}</p>`
  const fallback = data.summary.budget
  const sessionAt = (t: number): number => {
    let i = 0
    while (i + 1 < data.sessions.length && data.sessions[i + 1]!.start <= t) i++
    return i
  }
  const budgetOf = (session: number) => data.sessions[session]?.budget ?? fallback
  const inWindow = data.buckets.map((b) => {
    const end = b.start + data.bucketMs
    // A bucket in which a resume began is the resume's: its sends are mostly the new session's.
    const session = sessionAt(end - 1)
    const windowMs = budgetOf(session)?.windowMs ?? 60_000
    let n = 0
    let limited = 0
    for (const o of data.buckets) {
      if (o.start >= end - windowMs && o.start < end) {
        n += o.sends
        limited += o.rateLimited
      }
    }
    return { start: b.start, n, limited, session, windowMs }
  })
  // Consecutive buckets under one budget: one dashed line each.
  const segments: Array<{ from: number; to: number; budget: { limit: number; windowMs: number } | undefined }> = []
  inWindow.forEach((w, i) => {
    const budget = budgetOf(w.session)
    const last = segments.at(-1)
    if (last !== undefined && last.budget?.limit === budget?.limit && last.budget?.windowMs === budget?.windowMs) {
      last.to = i
    } else segments.push({ from: i, to: i, budget })
  })
  const peak = Math.max(...inWindow.map((w) => w.n))
  // A limit more than three times the peak would squash the bars to a line at 0: it is named, not drawn.
  const drawn = (limit: number) => limit <= Math.max(1, peak) * 3
  const ticks = niceTicks(
    Math.max(1, peak, ...segments.map((g) => (g.budget !== undefined && drawn(g.budget.limit) ? g.budget.limit : 0)))
  )
  const top = ticks.at(-1)! * 1.08
  const W = 640
  const H = 230
  const left = 56
  const right = 16
  const bottom = 28
  const above = 22
  const plotW = W - left - right
  const plotH = H - bottom - above
  const bw = plotW / inWindow.length
  const y = (v: number) => above + plotH - (plotH * v) / top
  const bars = inWindow
    .map((w, i) => {
      const x = left + i * bw
      return `<rect class="send" x="${x + 1}" y="${y(w.n)}" width="${Math.max(1, bw - 2)}" height="${
        above + plotH - y(w.n)
      }" fill="#1565c0"><title>${
        escape(
          t("chart.barTitle", { time: clock(w.start + data.bucketMs), count: fmt(w.n), window: msLabel(w.windowMs) })
        )
      }</title></rect>` +
        (w.limited > 0
          ? `<rect x="${x + 1}" y="${y(w.limited)}" width="${Math.max(1, bw - 2)}" height="${
            above + plotH - y(w.limited)
          }" fill="${colours.bad}"><title>${escape(t("chart.limitedTitle", { count: fmt(w.limited) }))}</title></rect>`
          : "")
    })
    .join("")
  const grid = ticks.map((v) =>
    `<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#e0e0e0"/><text x="${left - 6}" y="${
      y(v) + 4
    }" text-anchor="end">${fmt(v)}</text>`
  ).join("")
  const limits = segments.map((g, k) => {
    if (g.budget === undefined) return ""
    const x1 = left + g.from * bw
    const x2 = left + (g.to + 1) * bw
    // The label ends at the segment's right end, unless it is a short segment with room on its right.
    const anchorEnd = k === segments.length - 1 || x2 - x1 > 180 || x1 + 180 > W - right
    const tx = anchorEnd ? x2 - 2 : x1 + 2
    const anchor = anchorEnd ? "end" : "start"
    if (!drawn(g.budget.limit)) {
      return `<text data-figure="budget:${k}" x="${tx}" y="${
        above - 8
      }" text-anchor="${anchor}" fill="${colours.bad}">${
        escape(chartText.offScale(g.budget.limit, g.budget.windowMs))
      }</text>`
    }
    return `<line class="budget" x1="${x1}" x2="${x2}" y1="${y(g.budget.limit)}" y2="${
      y(g.budget.limit)
    }" stroke="${colours.bad}" stroke-dasharray="6 4"/>` +
      `<text data-figure="budget:${k}" x="${tx}" y="${
        y(g.budget.limit) - 4
      }" text-anchor="${anchor}" fill="${colours.bad}">${
        escape(chartText.budget(g.budget.limit, g.budget.windowMs))
      }</text>`
  }).join("")
  // Time labels: the first bar's starts at the left edge, the last one's ends at the right edge, so neither is cut.
  const label = (i: number, anchor: "start" | "middle" | "end") => {
    const x = anchor === "start" ? left : anchor === "end" ? W - right : left + i * bw + bw / 2
    return `<text class="time" x="${x}" y="${H - 8}" text-anchor="${anchor}">${
      clock(inWindow[i]!.start + data.bucketMs)
    }</text>`
  }
  const labels = inWindow.length === 1
    ? label(0, "middle")
    : label(0, "start") + (inWindow.length >= 5 ? label(Math.floor(inWindow.length / 2), "middle") : "") +
      label(inWindow.length - 1, "end")
  const several = segments.length > 1
  // The caption's figure keeps its `data-figure` span: the sentence is escaped around it.
  const [before, after] = t("chart.caption", { peak: "\u0000" }).split("\u0000")
  return `<svg class="chart" role="img" aria-label="${
    escape(t("chart.label"))
  }" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">${grid}${bars}${limits}${labels}</svg>` +
    `<p class="muted">${escape(before ?? "")}<span data-figure="peakWindow">${fmt(peak)}</span>${
      escape(
        (after ?? "") + (several ? t("chart.sessions") : "") +
          (segments.some((g) => g.budget !== undefined && !drawn(g.budget.limit)) ? chartText.offScaleNote(peak) : "") +
          t("chart.notInBars") + (inWindow.some((w) => w.limited > 0) ? t("chart.red") : "")
      )
    }</p>`
}

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  `<table><thead><tr>${head.map((h) => `<th>${escape(h)}</th>`).join("")}</tr></thead><tbody>` +
  rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("") +
  `</tbody></table>`

/**
 * A link to `file` in the folder `dir` (relative to the page), or nothing: a summary can be edited by anyone, so
 * only a relative path that stays inside the run directory is ever a link, every segment percent-encoded (a
 * `javascript:` step path becomes the file name `javascript%3A…`, never a scheme).
 */
const linkTo = (dir: string, file: string, label: string): string => {
  const parts = [...dir.split(/[\\/]+/), file].filter((p) => p !== "" && p !== ".")
  const inside = !Path.isAbsolute(dir) && !/^[a-z]:/i.test(dir) && !/^[\\/]/.test(dir) && !parts.includes("..")
  return inside ? `<a href="${escape(parts.map(encodeURIComponent).join("/"))}">${escape(label)}</a>` : ""
}

const section = (title: string, body: string): string => `<section><h2>${escape(title)}</h2>${body}</section>`

/** `text` escaped, its `\u0000`, `\u0001` … marks replaced by the values as code. */
const withCode = (text: string, values: ReadonlyArray<string>): string =>
  values.reduce((html, v, i) => html.replace(String.fromCharCode(i), `<code>${escape(v)}</code>`), escape(text))

/** A value of a plan's change as `plan show` prints it. */
const planValue = (v: unknown): string =>
  v === undefined || v === null || v === "" ? "(empty)" : typeof v === "number" || typeof v === "boolean"
    ? String(v)
    : JSON.stringify(v)

const statusTags = (counts: Readonly<Record<string, number>>, dry: boolean, figure: string): string =>
  `<span data-figure="${escape(figure)}">${
    Object.entries(counts).filter(([, n]) => n > 0).map(([k, n]) => {
      const shown = shownStatus(k as Status, dry)
      return `<span class="tag ${tone(shown)}">${escape(shown)} ${fmt(n)}</span>`
    }).join(" ")
  }</span>`

/**
 * The plan a run wrote (an onboarding's `--dry-run --plan`) or applied: its file and sha256 (what the approver
 * approves), approver and signer; each step's planned rows beside what the apply did; the rows that send a write
 * with their changes, as `plan show` prints them.
 */
const planSection = (data: RunData): string => {
  const p = data.plan
  if (p === undefined) return ""
  const applied = data.summary.plan
  const head = p.role === "written"
    ? withCode(t("report.planWritten", { file: "\u0000", sha: "\u0001" }), [p.file, p.sha256])
    : withCode(t("report.planApplied", { file: "\u0000", sha: "\u0001", target: "\u0002" }), [
      p.file,
      p.sha256,
      applied?.target.embedded === true ? t("report.embeddedSandbox") : applied?.target.baseUrl ?? ""
    ])
  const who = applied === undefined ? [] : [
    applied.approvedBy !== undefined
      ? `<span data-figure="plan:approvedBy">${escape(t("report.planApprover", { name: applied.approvedBy }))}</span>`
      : escape(t("report.planNoApprover")),
    ...(applied.signer !== undefined
      ? [withCode(
        t("report.planSigner", {
          keyId: "\u0000",
          trusted: applied.signer.trusted ? t("report.planTrusted") : ""
        }),
        [applied.signer.keyId]
      )]
      : [])
  ]
  const found = p.found.state === "missing"
    ? [withCode(t("report.planMissing", { file: "\u0000" }), [p.file])]
    : p.found.state === "changed"
    ? [withCode(t("report.planChanged", { file: "\u0000", sha: "\u0001" }), [p.file, p.found.sha256])]
    : []
  const lines = [head, ...who].map((l) => `<p data-figure="plan:${p.role}">${l}</p>`).join("") +
    found.map((l) => `<p class="muted" data-figure="plan:notRead">${l}</p>`).join("")
  if (p.found.state !== "read") return section(t("report.plan"), lines)
  const steps = table(
    headings(t("report.planStepsHeadings")),
    p.steps.map((step) => {
      const ran = data.steps.find((r) => r.resource === step.resource)
      // An import's page is its one step: what it did is the run's own counts.
      const did = ran?.counts ?? (data.steps.length === 0 ? data.summary.counts : undefined)
      return [
        escape(step.resource),
        fmt(step.rows),
        statusTags(step.counts, true, `plan:planned:${step.resource}`),
        p.role === "applied" && did !== undefined ? statusTags(did, false, `plan:applied:${step.resource}`) : "",
        ran === undefined ? "" : linkTo(ran.dir, reportHtml, t("report.report"))
      ]
    })
  )
  const w = p.writes
  const rows = w.total === 0
    ? `<p class="muted">${escape(t("report.planNoWrite"))}</p>`
    : table(
      headings(t("report.planRowsHeadings")),
      w.rows.map((r) => {
        const shown = shownStatus(r.status as Status, true)
        return [
          escape(r.step),
          `<span data-figure="plan:row:${escape(r.step)}:${r.row}">${r.row}</span>`,
          `<span class="tag ${tone(shown)}">${escape(shown)}</span>`,
          escape(r.intent),
          escape(
            [r.key, r.recordId !== undefined ? `id ${r.recordId}` : undefined].filter((x) => x !== undefined)
              .join(", ")
          ),
          escape(
            [
              ...r.changes.map((c) => `${c.field}: ${planValue(c.from)} → ${planValue(c.to)}`),
              ...r.planned.map((ref) => t("report.planRef", { field: ref.field, row: ref.row, resource: ref.resource }))
            ].join("; ")
          )
        ]
      })
    ) + (w.total > w.rows.length
      ? `<p class="muted">${
        escape(t("report.planFirstOf", { shown: fmt(w.rows.length), total: fmt(w.total), file: p.file }))
      }</p>`
      : "")
  return section(t("report.plan"), lines + steps + rows)
}

/** The page for one run directory. */
const renderRunReport = (data: RunData): string => {
  const s = data.summary
  const title = [s.command, s.resource].filter((x) => x !== undefined && x !== "").join(" ")
  const started = s.started === undefined ? NaN : Date.parse(s.started)
  const finished = s.finished === undefined || s.finished === null ? NaN : Date.parse(s.finished)
  const statuses = Object.entries(s.counts).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1])
  const dry = s.dryRun === true

  const settings: Array<[string, string]> = [
    [t("report.label.command"), escape(title)],
    ...(s.mode !== undefined
      ? [[t("report.label.mode"), escape(s.mode + (dry ? rehearsal.mode() : ""))] as [string, string]]
      : []),
    ...(s.source !== undefined
      ? [[t("report.label.source"), `<code>${escape(s.source)}</code>`] as [string, string]]
      : []),
    ...(s.baseUrl !== undefined
      ? [
        [
          t("report.label.target"),
          s.baseUrl === null ? escape(t("report.embeddedSandbox")) : `<code>${escape(s.baseUrl)}</code>`
        ] as [
          string,
          string
        ]
      ]
      : []),
    [t("report.label.started"), escape(s.started === undefined ? "—" : moment(s.started))],
    [t("report.label.finished"), escape(s.finished == null ? t("report.notFinished") : moment(s.finished))],
    [t("report.label.duration"), escape(duration(finished - started))],
    [t("report.label.rows"), `<span data-figure="rows">${fmt(s.rows)}</span>`],
    ...(s.requests !== undefined
      ? [[t("report.label.requests"), `<span data-figure="requests">${fmt(s.requests)}</span>`] as [string, string]]
      : []),
    ...(s.retries !== undefined
      ? [[t("report.label.retries"), `<span data-figure="retries">${fmt(s.retries)}</span>`] as [string, string]]
      : []),
    ...(s.rateLimited !== undefined
      ? [
        [t("report.label.rateLimitAnswers"), `<span data-figure="rateLimited">${fmt(s.rateLimited)}</span>`] as [
          string,
          string
        ]
      ]
      : []),
    ...(s.budget !== undefined
      ? [[
        t("report.label.budget"),
        escape(t("report.budget", { limit: fmt(s.budget.limit), window: msLabel(s.budget.windowMs) }))
      ] as [string, string]]
      : []),
    [
      t("report.label.exitCode"),
      `<span data-figure="exitCode">${s.exitCode}</span> — ${escape(exitMeaning(s.exitCode))}`
    ],
    ...(typeof s.aborted === "string" && s.aborted !== ""
      ? [[t("report.label.aborted"), escape(s.aborted)] as [string, string]]
      : []),
    ...(s.version !== undefined ? [["fsm-bulk", escape(s.version)] as [string, string]] : []),
    ...(s.plan !== undefined
      ? [
        [
          t("report.label.appliedPlan"),
          `<code>${escape(s.plan.file)}</code> (sha256 <code>${escape(s.plan.sha256)}</code>)${
            s.plan.target.baseUrl !== s.baseUrl ? `, made against <code>${escape(s.plan.target.baseUrl)}</code>` : ""
          }`
        ] as [string, string],
        [
          t("report.label.approvedBy"),
          s.plan.approvedBy !== undefined ? escape(s.plan.approvedBy) : escape(t("report.notGiven"))
        ] as [string, string]
      ]
      : [])
  ]

  const counts = statuses.length === 0
    ? `<p class="muted">${escape(t("report.noRows"))}</p>`
    : barList(
      statuses.map(([status, n]) => ({
        label: shownStatus(status as Status, dry),
        value: n,
        colour: colours[tone(shownStatus(status as Status, dry))],
        figure: `count:${status}`
      }))
    )

  // Rows that did not end well are never said to have no error: their count is given even when no message was kept.
  const unwell = statuses.filter(([status]) => !endedWell(status as Status, s.dryRun === true))
  const unwellRows = unwell.reduce((n, [, k]) => n + k, 0)
  const errors = data.errors.length === 0
    ? unwellRows === 0
      ? `<p class="muted">${escape(t("report.noRowError"))}</p>`
      : `<p class="muted">${
        escape(
          t(unwellRows === 1 ? "report.unwellOne" : "report.unwellMany", {
            rows: fmt(unwellRows),
            statuses: unwell.map(([status, n]) => `${status} ${fmt(n)}`).join(", "),
            where: data.steps.length > 0 ? t("report.eachStepPage") : "report.csv"
          })
        )
      }</p>`
    : table(
      headings(t("report.errorsHeadings")),
      data.errors.slice(0, 50).map((e, i) => [
        `<span${i < 5 ? ` class="top"` : ""} data-figure="error:${i}">${fmt(e.count)}</span>`,
        escape(e.kind),
        e.examples.map((x) => escape(t("report.rowExample", { row: x.row, error: x.error }))).join("<br>")
      ])
    ) + (data.errors.length > 50
      ? `<p class="muted">${escape(t("report.moreKinds", { count: data.errors.length - 50 }))}</p>`
      : "")

  const latency = data.latency.rows === 0
    ? `<p class="muted">${escape(t("report.noRowSent"))}</p>`
    : barList(data.latency.counts.map((n, i) => ({
      label: i < data.latency.bounds.length
        ? `≤ ${msLabel(data.latency.bounds[i]!)}`
        : `> ${msLabel(data.latency.bounds.at(-1)!)}`,
      value: n,
      colour: "#1565c0"
    }))) +
      `<p class="muted">${escape(t("report.latencyNote"))}</p>`

  const retries = data.attempts.size === 0
    ? ""
    : table(
      headings(t("report.attemptsHeadings")),
      [...data.attempts.entries()].sort((a, b) => a[0] - b[0]).map(([a, n]) => [String(a), fmt(n)])
    ) +
      (data.retryOutcomes.size === 0
        ? ""
        : `<h3>${escape(t("report.earlierAttempts"))}</h3>` +
          table(
            headings(t("report.outcomeHeadings")),
            [...data.retryOutcomes.entries()].sort((a, b) => b[1] - a[1]).map(([o, n]) => [escape(o), fmt(n)])
          ))

  const slowest = data.slowest.length === 0
    ? `<p class="muted">${escape(t("report.noRowSent"))}</p>`
    : table(
      headings(t("report.slowestHeadings")),
      data.slowest.map((
        r
      ) => [
        String(r.row),
        escape(duration(r.ms)),
        escape(r.status),
        r.http === undefined ? "" : String(r.http),
        String(r.attempts),
        r.requestId === undefined ? "" : `<code>${escape(r.requestId)}</code>`
      ])
    )

  const steps = data.steps.length === 0
    ? ""
    : section(
      t("report.steps"),
      table(
        headings(t("report.stepsHeadings")),
        data.steps.map((st) => [
          escape(st.resource),
          fmt(st.rows),
          Object.entries(st.counts).filter(([, n]) => n > 0).map(([k, n]) => {
            const shown = shownStatus(k as Status, dry)
            return `<span class="tag ${tone(shown)}">${escape(shown)} ${fmt(n)}</span>`
          }).join(" "),
          st.requests === undefined ? "" : fmt(st.requests),
          String(st.exitCode),
          linkTo(st.dir, reportHtml, t("report.report"))
        ])
      ) + (s.empty !== undefined && s.empty.length > 0
        ? `<p class="muted" data-figure="emptySheets">${
          escape(countedSheets("empty", s.empty, s.input === "directory" ? "directory" : "workbook"))
        }</p>`
        : "") +
        (s.readOnly !== undefined && s.readOnly.length > 0
          ? `<p class="muted" data-figure="readOnlySheets">${
            escape(countedSheets("readOnly", s.readOnly, s.input === "directory" ? "directory" : "workbook"))
          }</p>`
          : "")
    )

  // A dry run's rows that would change a record: what its sign-off is about.
  const w = data.wouldChange
  const wouldChange = s.dryRun !== true || data.steps.length > 0
    ? ""
    : section(
      t("report.wouldChange"),
      w.total === 0
        ? `<p class="muted">${escape(t("report.noRowWouldChange"))}</p>`
        : table(
          headings(t("report.wouldChangeHeadings")),
          w.rows.map((r) => [
            String(r.row),
            `<span class="tag ${tone(shownStatus(r.status as Status, true))}">${
              escape(shownStatus(r.status as Status, true))
            }</span>`,
            r.recordId === undefined ? "" : escape(r.recordId),
            r.changes === undefined ? (r.status === "created" ? escape(t("report.aNewRecord")) : "") : escape(r.changes)
          ])
        ) +
          (w.total > w.rows.length
            ? `<p class="muted">${escape(t("report.firstOf", { shown: fmt(w.rows.length), total: fmt(w.total) }))}</p>`
            : "")
    )
  // The mapping profile's column plan: what each of the customer's columns became (or that it was not sent).
  const m = s.mapping
  const shownSkipped = 10
  const columnPlan = m === undefined ? "" : section(
    t("report.columnPlan"),
    `<p>${
      escape(t("report.mappingRead", { file: "\u0000", sha: "\u0001", row: fmt(m.headerRow) }))
        .replace("\u0000", `<code>${escape(m.file)}</code>`)
        .replace("\u0001", `<code>${escape(m.sha256.slice(0, 12))}…</code>`)
    }</p>` +
      (m.plan === undefined || m.plan.length === 0 ? "" : table(
        headings(t("report.planHeadings")),
        m.plan.map((p) => [
          p.how === "composed" || p.how === "constant" ? `<code>${escape(p.source)}</code>` : escape(p.source),
          p.target === undefined
            ? `<span class="tag warn" data-figure="plan:${escape(p.source)}">${escape(t("report.notSent"))}</span>`
            : `<span data-figure="plan:${escape(p.source)}">${escape(p.target)}</span>`,
          escape(howMapped(p.how) + (p.valueMap === true ? t("report.withValueMap") : ""))
        ])
      )) +
      (m.skippedRows.length === 0 ?
        "" :
        `<p>${
          escape(
            t("report.skippedRows", {
              count: "\u0000",
              rows: m.skippedRows.slice(0, shownSkipped).map((r) => t("report.skippedRow", { row: r.row, why: r.why }))
                .join(", ") + (m.skippedRows.length > shownSkipped ? ", …" : "")
            })
          ).replace("\u0000", `<span data-figure="skippedRows">${fmt(m.skippedRows.length)}</span>`)
        }</p>`)
  )

  const perRow = data.steps.length > 0 && data.buckets.length === 0
    ? ""
    : section(t("report.sendsAgainstBudget"), windowChart(data)) +
      section(t("report.howLong"), latency) +
      section(
        t("report.attemptsPerRow"),
        retries === "" ? `<p class="muted">${escape(t("report.noRowSent"))}</p>` : retries
      ) +
      section(t("report.slowestRows"), slowest)

  return `<!doctype html>
<html lang="${currentLanguage()}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>fsm-bulk ${escape(title)}${dry ? ` (${escape(rehearsal.title())})` : ""}: ${
    escape(s.finished ?? s.started ?? "")
  }</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#212121;margin:24px auto;max-width:980px;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e0e0e0;padding-bottom:4px}h3{font-size:14px}
table{border-collapse:collapse;margin:6px 0}td,th{border-bottom:1px solid #eee;padding:4px 10px 4px 0;text-align:left;vertical-align:top}
th{font-weight:600;color:#424242}code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f5f5f5;padding:1px 4px;border-radius:3px}
.muted{color:#757575}.chart text{font:12px system-ui,sans-serif;fill:#424242}.top{font-weight:700}
.tag{display:inline-block;padding:0 6px;border-radius:3px;margin:1px 0;font-size:12px;color:#fff}.tag.good{background:${colours.good}}.tag.warn{background:${colours.warn}}.tag.bad{background:${colours.bad}}.tag.plan{background:${colours.plan}}.tag.none{background:${colours.none}}
.rehearsal{border:2px dashed ${colours.plan};color:${colours.plan};background:#eef4fb;padding:8px 12px;border-radius:4px;font-weight:600;margin:8px 0}
.verdict{font-size:15px;padding:8px 12px;border-radius:4px;color:#fff;display:inline-block;margin:8px 0}
</style></head><body>
<h1>fsm-bulk ${escape(title)}${dry ? ` <span class="tag plan">${escape(rehearsal.title())}</span>` : ""}</h1>
${
    dry
      ? `<p class="rehearsal" data-figure="dryRun">${escape(rehearsal.banner())}</p>\n`
      : ""
  }<div class="verdict" style="background:${
    dry ? colours.plan : s.exitCode === 0 ? colours.good : s.exitCode === 1 ? colours.warn : colours.bad
  }">${
    escape(
      t("report.exit", { code: s.exitCode, meaning: dry ? rehearsal.verdict(s.exitCode) : exitMeaning(s.exitCode) })
    )
  }</div>
${
    section(
      t("report.run"),
      table(["", ""], settings.map(([k, v]) => [escape(k), v])).replace(
        "<thead><tr><th></th><th></th></tr></thead>",
        ""
      )
    )
  }
${section(t("report.rowsByStatus"), counts)}
${columnPlan}
${steps}
${planSection(data)}
${section(t("report.errorsByKind"), errors)}
${wouldChange}
${perRow}
<p class="muted">${escape(t("report.footer", { dir: Path.basename(data.runDir) }))}</p>
</body></html>
`
}

/** Writes `report.html` into a run directory from its summary and journal (atomically: renamed into place). */
export const writeRunReport = Effect.fn("Html.writeRunReport")(function*(runDir: string) {
  const data = yield* readRunData(runDir)
  yield* writeFileAtomic(Path.join(runDir, reportHtml), renderRunReport(data))
  return Path.join(runDir, reportHtml)
})

/**
 * Writes `report.html` at the end of a run. The page is derived from files already on disk, so failing to write it
 * loses nothing: the run goes on with a warning that says how to write it again.
 */
export const refreshRunReport = (runDir: string) =>
  writeRunReport(runDir).pipe(
    Effect.asVoid,
    Effect.catchAll((e) =>
      Console.error(
        t("report.notWritten", {
          file: Path.join(runDir, reportHtml),
          problem: e.message,
          command: `fsm-bulk report ${shellQuote(runDir)}`
        })
      )
    )
  )
