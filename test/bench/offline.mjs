/**
 * Offline validation, each step in a child process of its own (time and peak RSS):
 * - the CSV: a bare csv-parse pass (the yardstick), `fsm-bulk validate customers FILE --out DIR` (the whole
 *   command: reading, validating, writing report.csv and report.xlsx), and validation alone (validate-only.mjs:
 *   the readers and validator from dist/, no report), so the report's share of the time shows;
 * - the XLSX workbook: the same command, and validation alone.
 * Every row of the generated files is valid, so any invalid row is a defect of the reading or validation.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { customersCsv, customersXlsx, offlineColumns } from "./data.mjs"
import { bin, jsonSummary, runNode } from "./measure.mjs"

const script = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url))

/** The `validate` command on `file`; exit 1 (some row invalid) is measured too and shows in `invalid`. */
const validateCommand = async (file, extra = []) => {
  const work = mkdtempSync(join(tmpdir(), "fsm-bench-validate-"))
  try {
    return await runNode([bin, "validate", "customers", file, "--out", join(work, "run"), "--json", ...extra])
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

const commandFigures = (run) => {
  if (run.code !== 0 && run.code !== 1) {
    throw new Error(`fsm-bulk validate exited ${run.code ?? run.signal}\n${run.stderr.slice(-4000)}`)
  }
  const summary = jsonSummary(run.stdout)
  return {
    ms: run.ms,
    rssMiB: run.rssMiB,
    rows: summary.rows,
    valid: summary.counts.valid,
    invalid: summary.counts.invalid,
    exitCode: run.code
  }
}

/** validate-only.mjs on `file`: the pieces' times and the peak RSS. */
const validationAlone = async (file) => {
  const run = await runNode([script("validate-only.mjs"), "customers", file])
  if (run.code !== 0 && run.code !== 1) {
    throw new Error(`validate-only.mjs exited ${run.code ?? run.signal}\n${run.stderr.slice(-4000)}`)
  }
  const pieces = JSON.parse(run.stdout.trim().split("\n").at(-1))
  return { ms: run.ms, rssMiB: run.rssMiB, ...pieces, invalid: pieces.rows - pieces.valid }
}

/**
 * How many times the CSV command runs: its peak RSS moves by a few MB from run to run with the moments V8
 * collects at, so the goal is checked on the highest of the runs and the time is their median.
 */
const commandRuns = 3

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export const csvScenario = async ({ rows }) => {
  const { path: file, generated } = await customersCsv(rows, offlineColumns)
  const bare = await runNode([script("csv-parse-pass.mjs"), file])
  if (bare.code !== 0) throw new Error(`csv-parse-pass.mjs exited ${bare.code}\n${bare.stderr}`)
  const records = JSON.parse(bare.stdout).records
  if (records !== rows + 1) throw new Error(`csv-parse read ${records} records, not ${rows + 1}`)
  const runs = []
  for (let i = 0; i < commandRuns; i++) runs.push(commandFigures(await validateCommand(file)))
  const ms = median(runs.map((r) => r.ms))
  const command = {
    ...runs[0],
    ms,
    msEach: runs.map((r) => r.ms),
    rssMiB: Math.max(...runs.map((r) => r.rssMiB)),
    rssMiBEach: runs.map((r) => r.rssMiB),
    invalid: Math.max(...runs.map((r) => r.invalid))
  }
  const alone = await validationAlone(file)
  return {
    rows,
    generated,
    csvParse: { ms: bare.ms, rssMiB: bare.rssMiB },
    command: { ...command, rowsPerSecond: rows / (ms / 1000) },
    alone,
    commandVsParse: ms / bare.ms,
    aloneVsParse: alone.ms / bare.ms
  }
}

export const xlsxScenario = async ({ rows }) => {
  const { path: file, generated } = await customersXlsx(rows, offlineColumns)
  const command = commandFigures(await validateCommand(file))
  const alone = await validationAlone(file)
  return { rows, generated, command: { ...command, rowsPerSecond: rows / (command.ms / 1000) }, alone }
}

/**
 * The profile of the mapping benchmark (docs/mapping.md): every column listed in `columns` (each cell copied by
 * index, as a rename is), two value maps and one composed field.
 */
export const benchProfile = {
  resource: "customers",
  columns: Object.fromEntries(offlineColumns.map((c) => [c, c])),
  fields: {
    active: { values: { "sim": "true", "não": "false" } },
    unitMaximumTime: { values: { "minutes": "1", "hours": "2" } },
    address: { compose: "{address} - {legalName}" }
  }
}

/** `validate` on the CSV scenario's file without and with a profile, alternating, `commandRuns` times each. */
export const profileScenario = async ({ rows }) => {
  const { path: file, generated } = await customersCsv(rows, offlineColumns)
  const work = mkdtempSync(join(tmpdir(), "fsm-bench-profile-"))
  try {
    const profile = join(work, "profile.json")
    writeFileSync(profile, JSON.stringify(benchProfile))
    const without = []
    const withProfile = []
    for (let i = 0; i < commandRuns; i++) {
      without.push(commandFigures(await validateCommand(file)))
      withProfile.push(commandFigures(await validateCommand(file, ["--map", profile])))
    }
    const ms = (runs) => median(runs.map((r) => r.ms))
    const rss = (runs) => Math.max(...runs.map((r) => r.rssMiB))
    return {
      rows,
      generated,
      without: { ms: ms(without), rssMiB: rss(without), msEach: without.map((r) => r.ms) },
      withProfile: {
        ms: ms(withProfile),
        rssMiB: rss(withProfile),
        msEach: withProfile.map((r) => r.ms),
        invalid: Math.max(...withProfile.map((r) => r.invalid))
      },
      ratio: ms(withProfile) / ms(without)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
