/**
 * Submitting work to the fleet: the file is validated offline first, exactly as `validate` does (an unreadable
 * file or a contradiction exits 2 and nothing is queued), then stored with the job's settings and queued. The
 * job's row in `fsm_bulk.jobs` holds what to run; the queue's job carries only its id.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import type { Mode, ParseSettings, ReadSettings } from "../import/Journal.js"
import { reportCsv } from "../import/RunDir.js"
import { runValidate } from "../import/ValidateRun.js"
import type { ResourceName } from "../Resources.js"
import { chunkRead, invalidRows, rowColumn, splitSource } from "./Chunks.js"
import { FleetError } from "./Errors.js"
import { enqueue, type FleetQueue } from "./Queue.js"
import { putFile, schema, type Store } from "./Store.js"

/** What an import job runs: the `import` command's settings (the file is stored beside it). */
export interface ImportSpec {
  readonly resource: string
  readonly mode: Mode
  readonly dryRun: boolean
  readonly verify: boolean
  readonly verifyWaitMs: number
  readonly read: ReadSettings
  readonly dateFormat: ParseSettings["dateFormat"]
  readonly decimal: ParseSettings["decimal"]
  readonly fileName: string
  /** A chunk's rows are numbered by this column (the source's row numbers). */
  readonly rowColumn?: string
}

/** A fresh job id. */
export const newJobId = (): string => randomUUID()

export interface Submitted {
  readonly job: string
  readonly rows: number
  readonly invalid: number
  /** Parts the file was split into (0: one job). */
  readonly chunks: number
}

export const submitImport = Effect.fn("Fleet.submitImport")(function*(
  store: Store,
  queue: FleetQueue,
  account: string,
  file: string,
  spec: Omit<ImportSpec, "fileName">,
  chunkRows: number
) {
  const known = yield* store.query(`SELECT 1 FROM ${schema}.accounts WHERE name = $1`, [account])
  if (known.length === 0) {
    return yield* new FleetError({
      reason: "NotFound",
      message: `no account "${account}" in this fleet: add it with \`fsm-bulk accounts add ${account} --base-url …\``
    })
  }
  // Offline validation into a scratch directory: the same reading and rules as the worker's run.
  const scratch = yield* Effect.acquireRelease(
    Effect.promise(() => mkdtemp(Path.join(tmpdir(), "fsm-submit-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const checked = yield* runValidate({
    resource: spec.resource as ResourceName,
    file,
    read: spec.read,
    dateFormat: spec.dateFormat,
    decimal: spec.decimal,
    mode: spec.mode,
    attachmentsRoot: undefined,
    runDir: Path.join(scratch, "validate")
  })
  const content = readFileSync(file)
  const id = newJobId()
  const fileName = Path.basename(file)
  const full: ImportSpec = { ...spec, fileName }
  const chunked = checked.summary.rows > chunkRows
  const resource = spec.resource as ResourceName
  const chunks = chunked
    ? yield* splitSource(
      file,
      spec.read,
      resource,
      chunkRows,
      scratch,
      yield* invalidRows(Path.join(checked.runDir, reportCsv), resource),
      checked.formats.decimal
    )
    : []
  yield* putFile(store, id, `source/${fileName}`, content)
  const insert = (job: string, parent: string | null, s: ImportSpec, rows: number) =>
    store.query(
      `INSERT INTO ${schema}.jobs (id, kind, account, resource, spec, state, rows, parent)
       VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)`,
      [job, parent === null ? "import" : "chunk", account, spec.resource, JSON.stringify(s), rows, parent]
    )
  yield* insert(id, null, full, checked.summary.rows)
  // Each chunk: its own file, read as written, with the formats the whole file settled on.
  const parts = chunks.map((c, i) => ({ ...c, id: `${id}-part${String(i + 1).padStart(4, "0")}` }))
  for (const part of parts) {
    const name = Path.basename(part.path)
    yield* putFile(store, part.id, `source/${name}`, readFileSync(part.path))
    yield* insert(part.id, id, {
      ...full,
      fileName: name,
      read: chunkRead,
      dateFormat: checked.formats.dateFormat,
      decimal: checked.formats.decimal,
      rowColumn
    }, part.rows)
  }
  if (parts.length === 0) yield* enqueue(queue, id)
  else yield* Effect.forEach(parts, (p) => enqueue(queue, p.id), { discard: true })
  return {
    job: id,
    rows: checked.summary.rows,
    invalid: checked.summary.counts.invalid ?? 0,
    chunks: parts.length
  } satisfies Submitted
})
