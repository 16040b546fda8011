/**
 * The main thread's side of a workbook written on a thread of its own (XlsxWorker.js, beside this module in src/
 * and in dist/): rows go over in batches, the archive's bytes come back and are written here, in order, to the
 * file the caller opened (its .tmp until the caller commits it). At most `maxInFlight` batches are out at a time,
 * and none goes while the file's buffer is full: memory stays bounded however fast the rows come. A batch goes
 * packed (RowBatch.js: its text as one string, its shape in transferred typed arrays), its text cells through the
 * caller's guard as they are packed, not as arrays of cells for the structured clone to walk.
 */
import type { Scope } from "effect"
import * as Effect from "effect/Effect"
import type { WriteStream } from "node:fs"
import { Worker } from "node:worker_threads"
import type { Cell } from "./Cell.js"
import { packRows, transferOf } from "./RowBatch.js"
import type { FrontRow } from "./XlsxWriter.js"

/** The workbook thread (XlsxWorker.js); a test may name another. */
const xlsxWorkerScript = new URL("./XlsxWorker.js", import.meta.url)
/** Batches sent and not yet answered: enough to keep the thread busy while the main thread builds the next. */
const maxInFlight = 2
/** The workbook thread's young generation (MB): its garbage is short-lived strings. */
const workerYoungMb = 4

/** Why the thread's table could not be written: its message, and whether the workbook would need ZIP64. */
export class XlsxThreadError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false
  ) {
    super(message)
  }
}

type Answer =
  | { readonly bytes: Uint8Array; readonly closed: boolean }
  | { readonly error: { readonly message: string; readonly tooLarge: boolean } }

export interface XlsxThread {
  /**
   * Sends a batch, its text cells through the thread's `textOf` (`measured`: the first rows as given, for the
   * column widths); waits while too many are out.
   */
  readonly write: (
    rows: ReadonlyArray<ReadonlyArray<Cell>>,
    measured?: ReadonlyArray<ReadonlyArray<Cell>>
  ) => Effect.Effect<void, XlsxThreadError>
  /** Finishes the workbook with its front sheet; every byte is then written to the file. */
  readonly close: (front: ReadonlyArray<FrontRow>) => Effect.Effect<void, XlsxThreadError>
}

/**
 * Starts the thread for a table whose `header` is already through the formula guard and the secret redaction, as
 * every text cell of the rows will be through `textOf` (they need this process's secrets); `options` are
 * XlsxTable's, without `text`. The thread ends with the scope.
 */
export const startXlsxThread = (
  stream: WriteStream,
  header: ReadonlyArray<Cell>,
  options: object,
  textOf: (text: string) => string,
  script: URL = xlsxWorkerScript
): Effect.Effect<XlsxThread, never, Scope.Scope> =>
  Effect.gen(function*() {
    let inFlight = 0
    let closed = false
    let failure: XlsxThreadError | undefined
    const waiting = new Set<() => void>()
    const wake = () => {
      for (const resume of [...waiting]) resume()
    }
    const fail = (error: XlsxThreadError) => {
      failure ??= error
      wake()
    }
    const worker = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Worker(script, {
          workerData: { header, options },
          resourceLimits: { maxYoungGenerationSizeMb: workerYoungMb }
        })
      ),
      (worker) => Effect.promise(() => worker.terminate())
    )
    worker.on("message", (answer: Answer) => {
      if ("error" in answer) return fail(new XlsxThreadError(answer.error.message, answer.error.tooLarge))
      // In the order made: the archive's bytes go to the file as they come.
      if (answer.bytes.byteLength > 0) stream.write(answer.bytes)
      inFlight--
      if (answer.closed) closed = true
      wake()
    })
    worker.on("error", (error) => fail(new XlsxThreadError(`the workbook's thread failed: ${error.message}`)))
    worker.on("exit", (code) => {
      if (!closed) fail(new XlsxThreadError(`the workbook's thread stopped (exit code ${code}) before the end`))
    })
    stream.on("drain", wake)
    // A file that fails is `errored` at once; its writer (Write.ts) reports it.
    stream.on("error", wake)

    /** Resumes once `ready` holds, or fails with the thread's failure. */
    const until = (ready: () => boolean) =>
      Effect.async<void, XlsxThreadError>((resume) => {
        const check = () => {
          if (failure !== undefined) return (waiting.delete(check), resume(Effect.fail(failure)), true)
          if (ready() || stream.errored !== null) return (waiting.delete(check), resume(Effect.void), true)
          return false
        }
        if (check()) return
        waiting.add(check)
        return Effect.sync(() => void waiting.delete(check))
      })

    const post = (message: unknown, transfer: ReadonlyArray<ArrayBuffer> = []) =>
      Effect.suspend(() => {
        if (failure !== undefined) return Effect.fail(failure)
        inFlight++
        worker.postMessage(message, [...transfer])
        return Effect.void
      })

    return {
      write: (rows, measured) =>
        until(() => inFlight < maxInFlight && !stream.writableNeedDrain).pipe(
          Effect.zipRight(Effect.suspend(() => {
            // Packed only when it can go: a batch waiting here holds its rows, not a second copy of them.
            const packed = packRows(rows, textOf)
            return post(
              measured === undefined || measured.length === 0 ? { packed } : { packed, measured },
              transferOf(packed)
            )
          }))
        ),
      close: (front) => post({ close: front }).pipe(Effect.zipRight(until(() => closed)))
    } satisfies XlsxThread
  })
