/**
 * Opening an input file: CSV or XLSX told by its first bytes (an .xlsx is a ZIP archive), with the clear
 * refusals a user needs for everything else (missing, a directory, an old .xls, an empty file).
 */
import * as Effect from "effect/Effect"
import { open, stat } from "node:fs/promises"
import * as Path from "node:path"
import type { InputError } from "../Errors.js"
import { openCsv } from "./Csv.js"
import { inputError } from "./Header.js"
import type { ReadOptions, Source } from "./Source.js"
import { readProgress } from "./Stall.js"
import { openXlsx } from "./Xlsx.js"

export type { ReadOptions, Source, SourceRow } from "./Source.js"

type Format = "csv" | "xlsx"

const zipMagic = [0x50, 0x4b, 0x03, 0x04]
/** OLE2 compound file: Excel 97-2003 workbooks, and password-protected .xlsx files. */
const oleMagic = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]

const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>) => magic.every((b, i) => bytes[i] === b)

const firstBytes = async (file: string): Promise<Uint8Array> => {
  const handle = await open(file, "r")
  try {
    const buffer = Buffer.alloc(8)
    const { bytesRead } = await handle.read(buffer, 0, 8, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

const formatOf = (file: string): Effect.Effect<Format, InputError> =>
  Effect.tryPromise({
    try: async () => {
      const info = await stat(file).catch((e: NodeJS.ErrnoException) => {
        throw e.code === "ENOENT" ? new Error("file not found") : e
      })
      if (info.isDirectory()) throw new Error("is a directory, not a file")
      const head = await firstBytes(file)
      const extension = Path.extname(file).toLowerCase()
      if (startsWith(head, oleMagic)) {
        throw new Error(
          "an Excel 97-2003 (.xls) or password-protected workbook: save it as .xlsx (without a password) or as CSV"
        )
      }
      if (startsWith(head, zipMagic)) return "xlsx" as const
      if (extension === ".xlsx" || extension === ".xlsm") {
        throw new Error(
          head.length === 0
            ? "not a valid .xlsx workbook: the file is empty"
            : "not a valid .xlsx workbook (it is not a ZIP archive)"
        )
      }
      if (extension === ".xls") throw new Error("not an Excel 97-2003 workbook either: save it as .xlsx or as CSV")
      return "csv" as const
    },
    catch: (cause) => inputError(file, cause instanceof Error ? cause.message : String(cause), { cause })
  })

/** Opens `file` (as the user gave it) as a CSV or XLSX source. */
export const openSource: (file: string, options: ReadOptions) => Effect.Effect<Source, InputError> = Effect.fn(
  "Read.openSource"
)(
  function*(file: string, options: ReadOptions) {
    const format = yield* readProgress().guard(formatOf(file))
    return format === "xlsx" ? yield* openXlsx(file, options) : yield* openCsv(file, options)
  }
)
