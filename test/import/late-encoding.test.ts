/**
 * A Brazilian file whose first 64 KiB are plain ASCII (Windows-1252, `;`, accents only in later rows): the import's
 * journal header and summary say windows-1252, a resume after a crash reads it the same way, and the accented
 * names reach the server intact.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { resumeRun } from "../../src/import/Resume.js"
import { apiOf, cp1252, importInto, put, readJournalLines, readSummary, startTestSandbox, tempDir } from "./support.js"

const rows = 400
/**
 * Rows of ASCII alone first, each with a long note (about 90 KiB in all, past the first 64 KiB: the test asserts it),
 * then accents. Long rows rather than many: the point is the 64 KiB, and every row is a request to the sandbox.
 */
const ascii = 300
const note = "Cliente atendido pela equipe da regiao sul, visitas mensais, contrato renovado a cada ano. ".repeat(3)
const clientes = cp1252(
  [
    "externalId;name;address;note",
    ...Array.from({ length: rows }, (_, i) =>
      i < ascii
        ? `C-${i};Mercado Central ${i} Ltda;Rua das Flores, ${i};${note}${i}`
        : `C-${i};Açougue São João ${i};Praça da Sé, ${i};`)
  ].join("\r\n") + "\r\n"
)

describe("an encoding decided late in the file", () => {
  it.scopedLive(
    "is recorded as decided, and a resume after a crash reads the file the same way",
    () =>
      Effect.gen(function*() {
        assert.isAbove(clientes.findIndex((b) => b > 0x7f), 64 * 1024, "the first 64 KiB are ASCII")
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", clientes)
        const runDir = Path.join(dir, "run")
        yield* importInto(sandbox, { resource: "customers", file, runDir })
        // The crash: nothing after the first accented rows was journaled (their writes are found again by key).
        const path = Path.join(runDir, "journal.ndjson")
        const kept = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").filter((l) => {
          const line = JSON.parse(l)
          return line.state !== "end" && !(typeof line.row === "number" && line.row > ascii + 2)
        })
        writeFileSync(path, kept.map((l) => `${l}\n`).join(""))
        const result = yield* resumeRun(runDir).pipe(Effect.provide(apiOf(sandbox)))
        assert.strictEqual(result.exitCode, 0)
        const header = readJournalLines(runDir)[0]!
        assert.strictEqual(header.source.encoding, "windows-1252")
        assert.strictEqual(header.source.delimiter, ";")
        assert.strictEqual(readSummary(runDir).formats.encoding, "windows-1252")
        const stored = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
        const values = new Set(stored.flatMap((r) => Object.values(r)))
        assert.isTrue(values.has(`Açougue São João ${rows - 1}`))
        assert.isTrue(values.has(`Praça da Sé, ${rows - 1}`))
      }),
    240_000
  )
})
