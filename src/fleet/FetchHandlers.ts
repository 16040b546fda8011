/**
 * What `fetch` runs, loaded when it runs (cli/Lazy.ts): a job's run directory written from the store, a job in parts
 * joined into one (its reports written again), an onboarding's or an export's files.
 */
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { summary as printSummary } from "../console/Output.js"
import { UsageError } from "../Errors.js"
import { journalFile } from "../import/Journal.js"
import type { Summary } from "../import/Report.js"
import { summaryFile } from "../import/RunDir.js"
import { mergeChunks } from "./Chunks.js"
import { type fetchConfig } from "./Commands.js"
import { fleetStore } from "./CommandStore.js"
import { FleetError } from "./Errors.js"
import { jobExitCode } from "./JobHandlers.js"
import { finalStates, type FleetStore, type JobRow } from "./Store.js"
import type { ImportSpec } from "./Submit.js"
import { fetchExport, fetchOnboard } from "./Whole.js"

const usage = (message: string) => new UsageError({ message })

/**
 * `fetch`'s work: the run directory of job `job`, once it has ended, written to `out` (a new or empty directory), and
 * its summary printed (one JSON line with `json`).
 */
export const fetchJob = (store: FleetStore, job: string, out: string, json: boolean) =>
  Effect.gen(function*() {
    const row = yield* store.job(job)
    if (!finalStates.includes(row.state)) {
      return yield* usage(`job ${job} is ${row.state}: fetch it once it has ended (fsm-bulk wait ${job})`)
    }
    const dir = Path.resolve(out)
    if (existsSync(dir) && !statSync(dir).isDirectory()) {
      return yield* usage(
        `--out ${out} is a file, not a directory: fetch into a new directory (nothing is overwritten)`
      )
    }
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      return yield* usage(`--out ${out} is not empty: fetch into a new directory (nothing is overwritten)`)
    }
    if (row.kind === "onboard") {
      const fetched = yield* fetchOnboard(store, row, dir)
      yield* printSummary(json, { job, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
        `job ${job} (onboard, ${row.state}) fetched into ${dir}: ${fetched.steps.length} step(s) with a journal${
          fetched.summary ? "" : "; it had not started, so there is no onboarding to resume"
        }`
      ])
      return 0 as ExitCode
    }
    if (row.kind === "export") {
      const written = yield* fetchExport(store, row, dir)
      yield* printSummary(json, { job, outDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
        written > 0
          ? `job ${job} (export, ${row.state}) fetched into ${dir}: ${written} files; check it with fsm-bulk verify ${dir}`
          : `job ${job} (export, ${row.state}) left no files: an export keeps its files only when it finishes`
      ])
      return 0 as ExitCode
    }
    const parts = yield* store.parts(job)
    if (parts.length > 0) return yield* fetchChunked(store, row, parts, Path.resolve(out), json)
    const lines = yield* store.journalLines(job)
    const sources = yield* store.files(job, "source/")
    const outs = yield* store.files(job, "out/")
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const source = sources[0]
    const sourceFile = source !== undefined ? Path.join(dir, "source", Path.basename(source.name)) : undefined
    if (source !== undefined && sourceFile !== undefined) writeFileSync(sourceFile, source.content)
    for (const f of outs) {
      const name = f.name.slice("out/".length)
      if (name === summaryFile) {
        const summary = JSON.parse(f.content.toString("utf8")) as Record<string, unknown>
        writeFileSync(
          Path.join(dir, name),
          JSON.stringify(
            { ...summary, runDir: dir, ...(sourceFile !== undefined ? { source: sourceFile } : {}) },
            null,
            2
          ) +
            "\n"
        )
      } else writeFileSync(Path.join(dir, name), f.content)
    }
    if (lines.length > 0) {
      const [head, ...rest] = lines
      const header = JSON.parse(head!) as { source: { file: string }; parse: { baseDir: string } }
      if (sourceFile !== undefined) {
        header.source.file = sourceFile
        header.parse.baseDir = Path.dirname(sourceFile)
      }
      writeFileSync(Path.join(dir, journalFile), [JSON.stringify(header), ...rest].join("\n") + "\n")
    }
    yield* printSummary(json, { job, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${job} (${row.state}) fetched into ${dir}`
    ])
    return 0 as ExitCode
  })

export const handleFetch = (a: Input<typeof fetchConfig>) =>
  Effect.gen(function*() {
    const { store } = yield* fleetStore(a.fleet)
    return yield* fetchJob(store, a.job, a.out, a.json)
  }).pipe(Effect.scoped)

/** A chunked job's run directory: the original file, its chunks' journals joined, reports written again. */
const fetchChunked = (store: FleetStore, row: JobRow, parts: ReadonlyArray<JobRow>, dir: string, json: boolean) =>
  Effect.gen(function*() {
    const source = (yield* store.files(row.id, "source/"))[0]
    if (source === undefined) {
      return yield* new FleetError({ reason: "NotFound", message: `job ${row.id} has no source file` })
    }
    mkdirSync(Path.join(dir, "source"), { recursive: true })
    const sourceFile = Path.join(dir, "source", Path.basename(source.name))
    writeFileSync(sourceFile, source.content)
    const journals = yield* Effect.forEach(parts, (p) => store.journalLines(p.id))
    const spec = row.spec as unknown as ImportSpec
    const summary = yield* mergeChunks({
      dir,
      source: sourceFile,
      read: spec.read,
      sha256: createHash("sha256").update(source.content).digest("hex"),
      journals,
      summaries: parts.map((p) => p.state === "done" ? (p.summary as unknown as Summary) : undefined),
      write: (path, text) => Effect.sync(() => writeFileSync(path, text))
    })
    yield* printSummary(json, { job: row.id, runDir: dir, state: row.state, exitCode: jobExitCode(row) }, [
      `job ${row.id} (${row.state}, ${parts.length} parts${
        summary === undefined ? ", none started" : ""
      }) fetched into ${dir}`
    ])
    return 0 as ExitCode
  })
