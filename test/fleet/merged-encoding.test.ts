/**
 * A chunked fleet job's fetched run directory describes the original file as a single run does: a Windows-1252
 * file whose first 64 KiB are plain ASCII is windows-1252 with `;` in the joined journal's header and in the
 * summary (not the user's `auto`, nor the chunks' UTF-8 with commas), and its accented names reach the server.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { chunkRead, invalidRows, mergeChunks, rowColumn, splitSource } from "../../src/fleet/Chunks.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import {
  cp1252,
  importInto,
  job,
  put,
  readJournalLines,
  readSummary,
  startTestSandbox,
  tempDir
} from "../import/support.js"

const rows = 120
/**
 * Rows of ASCII alone first, each with a long note (about 80 KiB in all, past the first 64 KiB: the test asserts it),
 * then accents. Long rows rather than many: the point is the 64 KiB, and every row is a request to the sandbox (400
 * rows of a third of the note's length before: 280 requests more for the same 64 KiB).
 */
const ascii = 100
const note = "Cliente atendido pela equipe da regiao sul, visitas mensais, contrato renovado a cada ano. ".repeat(8)
const clientes = cp1252(
  [
    "externalId;name;address;note",
    ...Array.from({ length: rows }, (_, i) =>
      i < ascii
        ? `C-${i};Mercado Central ${i} Ltda;Rua das Flores, ${i};${note}${i}`
        : `C-${i};Açougue São João ${i};Praça da Sé, ${i};`)
  ].join("\r\n") + "\r\n"
)

describe("a chunked job fetched", () => {
  it.scopedLive(
    "names the original file's encoding and delimiter, decided by the whole file",
    () =>
      Effect.gen(function*(): Effect.fn.Return<void, unknown, Scope.Scope> {
        assert.isAbove(clientes.findIndex((b) => b > 0x7f), 64 * 1024, "the first 64 KiB are ASCII")
        const dir = yield* tempDir
        const sandbox = yield* startTestSandbox()
        const file = put(dir, "clientes.csv", clientes)
        const checked = yield* runValidate(job({ resource: "customers", file, runDir: Path.join(dir, "validate") }))
        const invalid = yield* invalidRows(Path.join(checked.runDir, "report.csv"), "customers")
        const chunks = yield* splitSource(
          file,
          job({ resource: "customers", file, runDir: "" }).read,
          "customers",
          45,
          dir,
          invalid,
          "."
        )
        assert.strictEqual(chunks.length, 3)
        const parts = chunks.map((_, i) => Path.join(dir, `part-${i + 1}`))
        yield* Effect.forEach(chunks, (c, i) =>
          importInto(sandbox, {
            resource: "customers",
            file: c.path,
            runDir: parts[i]!,
            read: chunkRead,
            dateFormat: checked.formats.dateFormat,
            decimal: checked.formats.decimal,
            rowColumn
          }))
        const out = Path.join(dir, "fetched")
        mkdirSync(out)
        const summary = yield* mergeChunks({
          dir: out,
          source: file,
          read: { encoding: "auto", delimiter: "auto" },
          sha256: "",
          journals: parts.map((p) =>
            readFileSync(Path.join(p, "journal.ndjson"), "utf8").split("\n").filter((l) => l !== "")
          ),
          summaries: parts.map((p) => readSummary(p) as any),
          write: (path, text) => Effect.sync(() => writeFileSync(path, text))
        })
        const header = readJournalLines(out)[0]!
        assert.strictEqual(header.source.encoding, "windows-1252")
        assert.strictEqual(header.source.delimiter, ";")
        assert.strictEqual(summary?.formats?.encoding, "windows-1252")
        assert.strictEqual(readSummary(out).formats.delimiter, ";")
        assert.strictEqual(summary?.counts.created, rows)
        const names = new Set(
          (yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")).flatMap((r) => Object.values(r))
        )
        assert.isTrue(names.has(`Açougue São João ${rows - 1}`), `${names.size} values`)
      }),
    240_000
  )
})
