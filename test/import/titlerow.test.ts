/**
 * A file whose first row is a title above the real header, read without a mapping profile: the error names the
 * row read as the header, shows the first rows of the sheet, and says which row looks like the header with the
 * exact `map` command (the user's file, shell-quoted). Nothing is imported with a guessed header.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { shellQuote } from "../../src/Shell.js"
import { importInto, put, startTestSandbox, tempDir, validateFile, writes } from "./support.js"

describe("a title row above the header", () => {
  it.scopedLive(
    "names the header row read, shows the first rows and the map command; sends nothing",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(
          dir,
          "cadastro de clientes (2026).csv",
          // UTF-8, as Excel's "CSV UTF-8" saves it (the em dash has no Latin-1 byte)
          [
            "Cadastro de clientes — 2026;;",
            "Código;Nome;Cidade",
            "CLI-1;Padaria São João;São Paulo",
            "CLI-2;Mercado Bom Preço;Campinas"
          ].join("\r\n") + "\r\n"
        )
        const failure = yield* Effect.flip(
          importInto(sandbox, { resource: "customers", file, runDir: Path.join(dir, "run") })
        )
        assert.strictEqual(failure._tag, "InputError")
        const message = failure.message
        assert.include(message, "required column missing for upsert: name")
        assert.include(message, "the header was read from row 1; the first rows:")
        assert.include(message, "  row 1: Cadastro de clientes — 2026\n")
        assert.include(message, "  row 2: Código | Nome | Cidade\n")
        assert.include(message, "  row 3: CLI-1 | Padaria São João | São Paulo")
        assert.include(
          message,
          `row 2 looks like the header (a title above the table?): fsm-bulk map customers ${
            shellQuote(file)
          } proposes a mapping profile`
        )
        assert.include(shellQuote(file), "'", "the path needs quoting, and gets it")
        assert.deepStrictEqual(writes(yield* sandbox.control.requests), [], "nothing is sent")

        const checked = yield* Effect.flip(
          validateFile({ resource: "customers", file, runDir: Path.join(dir, "validate") })
        )
        assert.include(checked.message, "row 2 looks like the header")
      }),
    120_000
  )
})
