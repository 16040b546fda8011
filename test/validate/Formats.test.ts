/**
 * `auto` date order and decimal mark, settled from the whole file and never guessed: evidence wins, ambiguity
 * and contradictions stop with the column, a row and the flag that settles them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { InputError } from "../../src/Errors.js"
import type { SourceRow } from "../../src/files/Source.js"
import type { ResourceName } from "../../src/Resources.js"
import { resource } from "../../src/Resources.js"
import type { ParseOptions } from "../../src/validate/Validate.js"
import { inferFormats, planColumns, settleFormats } from "../../src/validate/Validate.js"
import { options as baseOptions, sourceRows, streamOf } from "./support.js"

/** The files here are new receivables, which have no key and no id column: they are created. */
const options = (overrides: Partial<ParseOptions> = {}) => baseOptions({ mode: "create", ...overrides })

const infer = (
  name: ResourceName,
  header: ReadonlyArray<string>,
  cells: ReadonlyArray<ReadonlyArray<string>>,
  overrides: Partial<ParseOptions> = {}
) =>
  Effect.gen(function*() {
    const opts = options(overrides)
    const plan = yield* planColumns(resource(name), `${name}.csv`, header, opts)
    return yield* Effect.either(inferFormats(plan, streamOf(sourceRows(cells)), opts))
  })

const refusal = (e: Either.Either<unknown, InputError>): InputError => {
  if (Either.isRight(e)) throw new Error(`expected the file to be refused, got ${JSON.stringify(e.right)}`)
  return e.left
}

const receivables = ["customerExternalId", "value", "dueDate", "competencyDate", "paidValue"]

describe("date order", () => {
  it.effect("one day-first date settles the whole file, even when the others read both ways", () =>
    Effect.gen(function*() {
      const r = yield* infer("receivables", receivables, [
        ["CLI-1", "10", "03/04/2026", "01/04/2026", ""],
        ["CLI-2", "10", "05/05/2026", "", ""],
        ["CLI-3", "10", "10/06/2026", "25/05/2026", ""]
      ])
      assert.deepStrictEqual(r, Either.right({ dateFormat: "dd/mm/yyyy", decimal: "." }))
    }))

  it.effect("one month-first date settles it the other way", () =>
    Effect.gen(function*() {
      const r = yield* infer("receivables", receivables, [
        ["CLI-1", "10", "03/04/2026", "", ""],
        ["CLI-2", "10", "12/31/2026", "", ""]
      ])
      assert.deepStrictEqual(r, Either.right({ dateFormat: "mm/dd/yyyy", decimal: "." }))
    }))

  it.effect("only year-first dates, or none at all, need no order", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* infer("receivables", receivables, [["CLI-1", "10", "2026-04-03", "2026-12-31T00:00:00", ""]]),
        Either.right({ dateFormat: "yyyy-mm-dd", decimal: "." })
      )
      assert.deepStrictEqual(
        yield* infer("receivables", receivables, [["CLI-1", "10", "", "", ""]]),
        Either.right({ dateFormat: "yyyy-mm-dd", decimal: "." })
      )
    }))

  it.effect("refuses a file whose every date reads both ways, naming the column, the row and the flag", () =>
    Effect.gen(function*() {
      const e = refusal(
        yield* infer("receivables", receivables, [
          ["CLI-1", "10", "", "2026-01-15", ""],
          ["CLI-2", "10", "03/04/2026", "", ""],
          ["CLI-3", "10", "11/12/2026", "05/05/2026", ""]
        ])
      )
      assert.instanceOf(e, InputError)
      assert.strictEqual(e.row, 3)
      assert.strictEqual(e.column, "dueDate")
      assert.strictEqual(
        e.message,
        `receivables.csv (row 3, column "dueDate"): cannot tell day-first from month-first dates: "03/04/2026" could be 3 April or 4 March, ` +
          `and no date in the file settles it; pass --date-format dd/mm/yyyy or --date-format mm/dd/yyyy`
      )
    }))

  it.effect("refuses dates that contradict each other, across columns", () =>
    Effect.gen(function*() {
      const e = refusal(
        yield* infer("receivables", receivables, [
          ["CLI-1", "10", "25/12/2026", "", ""],
          ["CLI-2", "10", "01/01/2027", "", ""],
          ["CLI-3", "10", "", "12/25/2026", ""]
        ])
      )
      assert.strictEqual(e.row, 4)
      assert.strictEqual(e.column, "competencyDate")
      assert.strictEqual(
        e.detail,
        `dates disagree on the day/month order: "25/12/2026" (row 2, column "dueDate") is day-first but "12/25/2026" is month-first; ` +
          `correct the file, or pass --date-format dd/mm/yyyy or --date-format mm/dd/yyyy (dates that do not fit become invalid rows)`
      )
    }))

  it.effect("an explicit --date-format is used as given, without reading the file", () =>
    Effect.gen(function*() {
      const failing = Stream.fail(new InputError({ file: "x.csv", detail: "must not be read" }))
      const opts = options({ dateFormat: "dd/mm/yyyy", decimal: "," })
      const plan = yield* planColumns(resource("receivables"), "x.csv", receivables, opts)
      assert.deepStrictEqual(yield* inferFormats(plan, failing, opts), { dateFormat: "dd/mm/yyyy", decimal: "," })
    }))
})

describe("decimal mark", () => {
  it.effect("reads a decimal comma from pt-BR values, thousands included", () =>
    Effect.gen(function*() {
      const r = yield* infer("receivables", receivables, [
        ["CLI-1", "1.234", "", "", ""],
        ["CLI-2", "350,00", "", "", ""]
      ])
      assert.deepStrictEqual(r, Either.right({ dateFormat: "yyyy-mm-dd", decimal: "," }))
    }))

  it.effect("reads a decimal point", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* infer("receivables", receivables, [["CLI-1", "1,234.50", "", "", ""]]),
        Either.right({ dateFormat: "yyyy-mm-dd", decimal: "." })
      )
      assert.deepStrictEqual(
        yield* infer("receivables", receivables, [["CLI-1", "0.5", "", "", ""]]),
        Either.right({ dateFormat: "yyyy-mm-dd", decimal: "." })
      )
    }))

  it.effect("refuses a file whose numbers all read both ways", () =>
    Effect.gen(function*() {
      const e = refusal(
        yield* infer("receivables", receivables, [
          ["CLI-1", "350", "", "", ""],
          ["CLI-2", "1,234", "", "", "1.500"]
        ])
      )
      assert.strictEqual(
        e.message,
        `receivables.csv (row 3, column "value"): cannot tell the decimal mark: "1,234" reads as 1234 with a decimal point and as 1.234 with a decimal comma, ` +
          `and no number in the file settles it; pass --decimal , or --decimal .`
      )
    }))

  it.effect("refuses numbers that contradict each other", () =>
    Effect.gen(function*() {
      const e = refusal(
        yield* infer("receivables", receivables, [
          ["CLI-1", "12,50", "", "", ""],
          ["CLI-2", "10", "", "", "1,234.56"]
        ])
      )
      assert.strictEqual(e.row, 3)
      assert.strictEqual(e.column, "paidValue")
      assert.match(
        e.detail,
        /^numbers disagree on the decimal mark: "12,50" \(row 2, column "value"\) has a decimal comma but "1,234.56" has a decimal point; .*--decimal , or --decimal \./
      )
    }))
})

describe("one pass (settleFormats, the validate command's)", () => {
  /** A source read `runs.count` times; each read yields the rows. */
  const counted = (rows: ReadonlyArray<SourceRow>) => {
    const runs = { count: 0 }
    // One row a chunk, so that the look-ahead is counted in rows.
    return { runs, stream: Stream.suspend(() => (runs.count++, Stream.rechunk(streamOf(rows), 1))) }
  }

  const settle = (header: ReadonlyArray<string>, cells: ReadonlyArray<ReadonlyArray<string>>, lookahead?: number) =>
    Effect.gen(function*() {
      const opts = options()
      const plan = yield* planColumns(resource("receivables"), "receivables.csv", header, opts)
      const source = counted(sourceRows(cells))
      const settled = yield* Effect.either(
        Effect.flatMap(
          settleFormats(plan, source.stream, opts, lookahead),
          ({ formats, rows }) => Effect.map(Stream.runCollect(rows), (read) => ({ formats, rows: Chunk.toArray(read) }))
        )
      )
      const whole = yield* Effect.either(inferFormats(plan, streamOf(sourceRows(cells)), opts))
      return { settled, whole, reads: source.runs.count }
    }).pipe(Effect.scoped)

  const files: ReadonlyArray<ReadonlyArray<ReadonlyArray<string>>> = [
    [["CLI-1", "10", "03/04/2026", "01/04/2026", ""], ["CLI-2", "10", "05/05/2026", "", ""], [
      "CLI-3",
      "10",
      "10/06/2026",
      "25/05/2026",
      ""
    ]],
    [["CLI-1", "10", "25/12/2026", "", ""], ["CLI-2", "10", "01/01/2027", "", ""], [
      "CLI-3",
      "10",
      "",
      "12/25/2026",
      ""
    ]],
    [["CLI-1", "10", "", "2026-01-15", ""], ["CLI-2", "10", "03/04/2026", "", ""], [
      "CLI-3",
      "10",
      "11/12/2026",
      "05/05/2026",
      ""
    ]],
    [["CLI-1", "12,50", "", "", ""], ["CLI-2", "10", "", "", "1,234.56"]],
    [["CLI-1", "350", "", "", ""], ["CLI-2", "1,234", "", "", "1.500"]],
    [["CLI-1", "1.234", "15/01/2026", "", ""], ["CLI-2", "350,00", "", "", ""], ["CLI-3", "7", "", "", ""]]
  ]

  it.effect("gives what the whole file gives (formats or the same refusal), and every row in order, whatever the look-ahead", () =>
    Effect.gen(function*() {
      for (const cells of files) {
        for (const lookahead of [1, 2, undefined]) {
          const { settled, whole } = yield* settle(receivables, cells, lookahead)
          if (Either.isLeft(whole)) {
            assert.strictEqual(Either.isLeft(settled) ? settled.left.message : settled.right, whole.left.message)
            continue
          }
          assert.deepStrictEqual(settled, Either.right({ formats: whole.right, rows: sourceRows(cells) }))
        }
      }
    }))

  it.effect("reads the file once when the first rows settle it, twice when they do not within the look-ahead", () =>
    Effect.gen(function*() {
      const settledEarly = yield* settle(receivables, files[5]!, 2)
      assert.strictEqual(settledEarly.reads, 1)
      assert.deepStrictEqual(Either.getOrThrow(settledEarly.settled).formats, {
        dateFormat: "dd/mm/yyyy",
        decimal: ","
      })
      const late = [["CLI-1", "10", "", "", ""], ["CLI-2", "10", "", "", ""], ["CLI-3", "10,5", "25/12/2026", "", ""]]
      const undecided = yield* settle(receivables, late, 2)
      assert.strictEqual(undecided.reads, 2)
      assert.deepStrictEqual(Either.getOrThrow(undecided.settled), {
        formats: { dateFormat: "dd/mm/yyyy", decimal: "," },
        rows: sourceRows(late)
      })
    }))

  it.effect("hands the formats over before the file is read to its end", () =>
    Effect.gen(function*() {
      const opts = options()
      const plan = yield* planColumns(resource("receivables"), "receivables.csv", receivables, opts)
      const broken = Stream.concat(
        streamOf(sourceRows(files[5]!)),
        Stream.fail(new InputError({ file: "receivables.csv", detail: "read further" }))
      )
      const { formats, rows } = yield* settleFormats(plan, broken, opts, 100)
      assert.deepStrictEqual(formats, { dateFormat: "dd/mm/yyyy", decimal: "," })
      const rest = yield* Effect.either(Stream.runCollect(rows))
      assert.strictEqual(Either.isLeft(rest) && rest.left.detail, "read further")
    }).pipe(Effect.scoped))
})
