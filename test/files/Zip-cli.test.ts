import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Stream } from "effect"
import { spawnSync } from "node:child_process"
import { closeSync, constants, existsSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as Path from "node:path"
import { constants as zlib, deflateRawSync } from "node:zlib"
import { openSource } from "../../src/files/Read.js"
import { stopOnSignals } from "../../src/Signals.js"
import { runCli, startTestSandbox, until, writes } from "../import/support.js"
import { spawned } from "../spawned.js"
import { auto, bin, put, readAll, readError, root, sheetXml, tempDir, workbookEntries, zipArchive } from "./support.js"

const customers = (n: number): Array<readonly [number, ReadonlyArray<string>]> => [
  [1, ["externalId", "name"]],
  ...Array.from(
    { length: n },
    (_, i): readonly [number, ReadonlyArray<string>] => [i + 2, [`CLI-${i + 1}`, `Cliente ${i + 1}`]]
  )
]

/** Waits until a thread of this process waits in the kernel for the other end of a pipe (Linux's /proc). */
const stuckOnPipe = until(() =>
  readdirSync("/proc/self/task").some((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/wchan`, "utf8").includes("wait_for_partner")
    } catch {
      return false
    }
  })
)

/** Lets a reader waiting on pipe `path` go (it then reads an empty file), if one waits. */
const release = (path: string) => {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK))
  } catch {
    // No reader waits any more.
  }
}

/** `fsm-bulk validate customers FILE`, killed if it has not ended within a minute (a hang). */
const validateCli = (file: string, out: string) => {
  assert.isTrue(existsSync(bin), "build first: npm run build")
  return spawned(process.execPath, [bin, "validate", "customers", file, "--out", out], { cwd: root, timeout: 60_000 })
    .pipe(Effect.map((run) => ({ code: run.status, stderr: run.stderr })))
}

describe("XLSX archives", () => {
  it.scopedLive("reads exactly the entries of the central directory: a ghost local entry is never read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // The listed sheet holds one customer; a local entry of the same name that the directory does not list holds
      // a second one. `unzip` and spreadsheets see one row; so must the import.
      const ghost = { name: "xl/worksheets/sheet1.xml", data: sheetXml(customers(2)), listed: false }
      const file = put(dir, "ghost.xlsx", zipArchive(workbookEntries({ data: sheetXml(customers(1)) }, [ghost])))
      const { rows } = yield* readAll(file)
      assert.deepStrictEqual(rows, [{ row: 2, cells: ["CLI-1", "Cliente 1"] }])
      // A directory that lists one name twice is ambiguous: refused.
      const twice = put(
        dir,
        "twice.xlsx",
        zipArchive(workbookEntries({ data: sheetXml(customers(1)) }, [{ ...ghost, listed: true }]))
      )
      assert.include(
        (yield* readError(twice)).message,
        "twice.xlsx: not a valid .xlsx workbook: the ZIP directory lists xl/worksheets/sheet1.xml twice"
      )
    }))

  it.scopedLive("a damaged entry fails the read, naming the file and the entry; `validate` exits 2 instead of hanging", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const xml = sheetXml(customers(3_000))
      const half = xml.length >> 1
      // The first half of the sheet deflated, then a block of a type that does not exist: the rows before it
      // inflate, then zlib fails. (exceljs on its own waited for the rest of that entry forever.)
      const broken = Buffer.concat([
        deflateRawSync(Buffer.from(xml.slice(0, half)), { finishFlush: zlib.Z_SYNC_FLUSH }),
        Buffer.from([0x06, 0, 0, 0])
      ])
      const damaged = put(dir, "damaged.xlsx", zipArchive(workbookEntries({ data: xml, body: broken })))
      const error = yield* readError(damaged)
      assert.include(
        error.message,
        "damaged.xlsx: damaged .xlsx: xl/worksheets/sheet1.xml cannot be decompressed (invalid block type)"
      )
      const cli = yield* validateCli(damaged, Path.join(dir, "run"))
      assert.strictEqual(cli.code, 2, cli.stderr)
      assert.include(cli.stderr, "damaged .xlsx: xl/worksheets/sheet1.xml cannot be decompressed")

      // Stored bytes changed in place: the sizes hold, the CRC-32 does not.
      const altered = Buffer.from(sheetXml(customers(1)).replace("CLI-1", "CLI-9"))
      const flipped = put(
        dir,
        "flipped.xlsx",
        zipArchive(workbookEntries({ data: sheetXml(customers(1)), stored: true, body: altered }))
      )
      assert.include(
        (yield* readError(flipped)).message,
        "damaged .xlsx: xl/worksheets/sheet1.xml cannot be decompressed (its CRC-32 does not match"
      )
      // An entry that inflates to more than its directory says.
      const longer = put(
        dir,
        "longer.xlsx",
        zipArchive(workbookEntries({ data: sheetXml(customers(50)), declaredSize: 300 }))
      )
      assert.include(
        (yield* readError(longer)).message,
        "damaged .xlsx: xl/worksheets/sheet1.xml cannot be decompressed (too many bytes in the stream"
      )
    }))

  it.scopedLive("refuses zip bombs before inflating them: over 100 times its size past 1 MiB, or over 1 GiB", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // 20 MiB of shared strings in a few KB (the workbook that inflated 1 GB, scaled down).
      const strings = `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${
        "<si><t>a</t></si>".repeat(1_250_000)
      }</sst>`
      const sharedStrings = { name: "xl/sharedStrings.xml", data: strings }
      const rels = (entries: ReturnType<typeof workbookEntries>) =>
        entries.map((e) =>
          e.name === "xl/_rels/workbook.xml.rels"
            ? {
              ...e,
              data: String(e.data).replace(
                "</Relationships>",
                "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings\" Target=\"sharedStrings.xml\"/></Relationships>"
              )
            }
            : e
        )
      const bomb = put(
        dir,
        "strings.xlsx",
        zipArchive(rels(workbookEntries({ data: sheetXml(customers(1)) }, [sharedStrings])))
      )
      const refused = yield* readError(bomb)
      assert.match(
        refused.message,
        /strings\.xlsx: refused: xl\/sharedStrings\.xml inflates 0\.\d MiB into 20\.3 MiB \(\d+ times; at most 100 times past 1\.0 MiB\)/
      )
      assert.include(refused.message, "saved as CSV, the sheet has no such limit")
      // A sheet of empty rows, as repetitive: refused before its first row.
      const empty = `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${
        "<row/>".repeat(500_000)
      }</sheetData></worksheet>`
      const rows = put(dir, "rows.xlsx", zipArchive(workbookEntries({ data: empty })))
      assert.include((yield* readError(rows)).message, "refused: xl/worksheets/sheet1.xml inflates")
      // Whatever its ratio, an entry declaring more than 1 GiB is not inflated (and could not lie about it).
      const huge = put(
        dir,
        "huge.xlsx",
        zipArchive(workbookEntries({ data: sheetXml(customers(1)), declaredSize: 1536 * 1024 * 1024 }))
      )
      assert.include(
        (yield* readError(huge)).message,
        "refused: xl/worksheets/sheet1.xml inflates to 1536.0 MiB, more than the 1024.0 MiB an entry may"
      )

      const cli = yield* validateCli(bomb, Path.join(dir, "run"))
      assert.strictEqual(cli.code, 2, cli.stderr)
      assert.include(cli.stderr, "refused: xl/sharedStrings.xml inflates")
    }))

  it.scopedLive("refuses sheets whose row numbers repeat, go backwards or pass Excel's last row", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const twice = put(
        dir,
        "twice.xlsx",
        zipArchive(workbookEntries({ data: sheetXml([...customers(1), [2, ["CLI-2", "Cliente 2"]]]) }))
      )
      const repeated = yield* readError(twice)
      assert.strictEqual(repeated.row, 2)
      assert.include(repeated.message, "twice.xlsx (row 2): sheet \"customers\" lists row 2 twice")
      const back = put(
        dir,
        "back.xlsx",
        zipArchive(workbookEntries({ data: sheetXml([...customers(3), [3, ["CLI-9", "Cliente 9"]]]) }))
      )
      assert.include((yield* readError(back)).message, "back.xlsx (row 3): sheet \"customers\" lists row 3 after row 4")
      const beyond = put(
        dir,
        "beyond.xlsx",
        zipArchive(workbookEntries({ data: sheetXml([...customers(1), [1_048_577, ["CLI-2", "Cliente 2"]]]) }))
      )
      assert.include(
        (yield* readError(beyond)).message,
        "sheet \"customers\" has a row numbered 1048577: Excel numbers rows 1 to 1048576"
      )
      // The header row repeated is refused as well, before any data row.
      const header = put(
        dir,
        "header.xlsx",
        zipArchive(workbookEntries({ data: sheetXml([[1, ["externalId", "name"]], [1, ["CLI-1", "x"]]]) }))
      )
      assert.include((yield* readError(header)).message, "sheet \"customers\" lists row 1 twice")

      const cli = yield* validateCli(twice, Path.join(dir, "run"))
      assert.strictEqual(cli.code, 2, cli.stderr)
      assert.include(cli.stderr, "sheet \"customers\" lists row 2 twice")
    }))

  it.scopedLive("a cell longer than Excel's 32,767 characters makes its row invalid, not the file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "long.xlsx",
        zipArchive(workbookEntries({ data: sheetXml([...customers(2), [4, ["CLI-3", "x".repeat(40_000)]]]) }))
      )
      const out = Path.join(dir, "run")
      const cli = yield* validateCli(file, out)
      assert.strictEqual(cli.code, 1, cli.stderr)
      const report = readFileSync(Path.join(out, "report.csv"), "utf8").split("\r\n")
      assert.include(report[3], "invalid")
      assert.include(report[3], "name: 40,000 characters: a cell holds at most 32,767 (Excel's limit)")
      assert.notInclude(report[1], "invalid")
    }))

  it.scopedLive("a read that makes no progress can be interrupted, and the first stop signal stops it (XLSX and CSV)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "stuck.xlsx", zipArchive(workbookEntries({ data: sheetXml(customers(2)) })))
      const opened = yield* openSource(file, auto)
      // The file becomes a pipe that no one writes: reading its rows waits without end, as a stuck disk would.
      rmSync(file)
      assert.strictEqual(spawnSync("mkfifo", [file]).status, 0)
      yield* Effect.addFinalizer(() => Effect.sync(() => release(file)))

      // Interrupted (what `validate` does on the first signal): the interruption completes.
      const reading = yield* Effect.fork(Stream.runDrain(opened.rows))
      yield* stuckOnPipe
      yield* Fiber.interrupt(reading)
      release(file)

      // Left alone (an import's scan): the first signal stops it.
      const stopped = yield* Effect.scoped(
        Effect.gen(function*() {
          yield* stopOnSignals({ stopping: "stopping (test)" })
          const read = yield* Effect.fork(Effect.exit(Stream.runDrain(opened.rows)))
          yield* stuckOnPipe
          process.emit("SIGINT", "SIGINT")
          return yield* Fiber.join(read)
        })
      )
      assert.isTrue(
        Exit.isFailure(stopped) && Cause.isInterruptedOnly(stopped.cause),
        `interrupted, not ${String(stopped)}`
      )
      release(file)

      // The same rule holds for a CSV file (here stuck in its first pass, the encoding's).
      const csv = Path.join(dir, "stuck.csv")
      assert.strictEqual(spawnSync("mkfifo", [csv]).status, 0)
      yield* Effect.addFinalizer(() => Effect.sync(() => release(csv)))
      const csvStopped = yield* Effect.scoped(
        Effect.gen(function*() {
          yield* stopOnSignals({ stopping: "stopping (test)" })
          const open = yield* Effect.fork(Effect.exit(openSource(csv, auto)))
          yield* stuckOnPipe
          process.emit("SIGINT", "SIGINT")
          return yield* Fiber.join(open)
        })
      )
      assert.isTrue(
        Exit.isFailure(csvStopped) && Cause.isInterruptedOnly(csvStopped.cause),
        `interrupted, not ${String(csvStopped)}`
      )
    }))

  it.scopedLive("import refuses a damaged workbook with exit 2 and sends nothing", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const xml = sheetXml(customers(3_000))
      // Damaged near its end: the rows before the damage validate, and the scan still reads to the end first.
      const cut = Math.floor(xml.length * 0.9)
      const broken = Buffer.concat([
        deflateRawSync(Buffer.from(xml.slice(0, cut)), { finishFlush: zlib.Z_SYNC_FLUSH }),
        Buffer.from([0x06, 0, 0, 0])
      ])
      const file = put(dir, "customers.xlsx", zipArchive(workbookEntries({ data: xml, body: broken })))
      const ended = yield* runCli(["import", "customers", file, "--out", Path.join(dir, "run")], sandbox, dir)
      assert.strictEqual(ended.code, 2, ended.stderr)
      assert.include(
        ended.stderr,
        "customers.xlsx: damaged .xlsx: xl/worksheets/sheet1.xml cannot be decompressed (invalid block type)"
      )
      assert.deepStrictEqual(writes(yield* sandbox.control.requests), [])
    }))
})
