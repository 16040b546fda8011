/**
 * Offline validation without the report: the built readers and validator (dist/) as the `validate` command
 * calls them — openSource, planColumns, settleFormats (formats from the first rows), then makeValidator over
 * the same read — with
 * no journal, report or summary written, and every row required to be valid. Run as a child process:
 * `node validate-only.mjs RESOURCE FILE`; prints `{"rows", "valid", "msOpen", "msFormats", "msValidate"}`.
 */
import { Cause, Effect, Option, Stream } from "effect"
import { dirname, resolve } from "node:path"
import { openSource } from "../../dist/files/Read.js"
import { resource } from "../../dist/Resources.js"
import { makeValidator, planColumns, settleFormats } from "../../dist/validate/Validate.js"

const [name, given] = process.argv.slice(2)
const file = resolve(given)
const options = {
  dateFormat: "auto",
  decimal: "auto",
  mode: "upsert",
  baseDir: dirname(file),
  maxAttachmentBytes: 10 * 1024 * 1024,
  restoreGuard: false
}

const program = Effect.scoped(Effect.gen(function*() {
  const t0 = performance.now()
  const source = yield* openSource(file, { encoding: "auto", delimiter: "auto", resource: name })
  const columns = yield* planColumns(resource(name), file, source.header, {
    ...options,
    restoreGuard: source.writtenByTool
  })
  const t1 = performance.now()
  const { formats, rows: settled } = yield* settleFormats(columns, source.rows, options)
  const t2 = performance.now()
  const validator = makeValidator(columns, formats, options)
  let rows = 0
  let valid = 0
  yield* Stream.runForEach(settled, (row) =>
    Effect.map(validator.validate(row), (result) => {
      rows++
      if (result._tag === "Valid") valid++
    }))
  const t3 = performance.now()
  return { rows, valid, msOpen: t1 - t0, msFormats: t2 - t1, msValidate: t3 - t2 }
}))

const exit = await Effect.runPromiseExit(program)
if (exit._tag === "Failure") {
  const failure = Cause.failureOption(exit.cause)
  console.error(Option.isSome(failure) ? `validate-only: ${failure.value.message}` : Cause.pretty(exit.cause))
  process.exit(2)
}
console.log(JSON.stringify(exit.value))
if (exit.value.valid !== exit.value.rows) process.exitCode = 1
