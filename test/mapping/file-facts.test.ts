/**
 * What a mapped file's rows say about the file itself is read from the file's own rows, not from the rows the
 * profile rewrote:
 * - its size: the duplicate checks' tables are sized once from it. A profile whose composed field repeats a
 *   column makes each rewritten row longer than the file's; projected from the rewritten rows the file looked
 *   shorter than it is, so the tables grew again late in the file, old and new arrays alive together near the
 *   run's peak (1M rows: +21 MB, docs/benchmarks.md), and validate's progress over-counted the bytes read;
 * - its encoding: decided by the first non-ASCII character, which may come after the first bytes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { statSync } from "node:fs"
import * as Path from "node:path"
import { FileReadProgress } from "../../src/console/Progress.js"
import { openInput, planInput } from "../../src/import/Input.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import { readProfile } from "../../src/mapping/Profile.js"
import { resource } from "../../src/Resources.js"
import { makeValidator, settleFormats } from "../../src/validate/Validate.js"
import { put, tempDir } from "../import/support.js"
import { brazilianList, cnpj } from "./support.js"

const rows = 30_000
/** Rows validated before the tables are looked at: past the 10,000 keys after which they trust a projection. */
const early = 15_000

/** The trading name shown with the legal name, which also goes to legalName: each rewritten row is longer. */
const profile = {
  resource: "customers",
  columns: { "Código": "externalId", "Razão Social": "legalName", "CNPJ": "cpfCnpj", "Vendedor": "ignore" },
  fields: {
    name: { compose: "{Nome Fantasia} ({Razão Social})" },
    address: { compose: "{Rua}, {Número} - {Bairro}" }
  }
}

/** A customer list of `rows` rows (Windows-1252, `;`, a title row, a footer) and its profile, in `dir`. */
const clientes = (dir: string) =>
  Effect.gen(function*() {
    const body = Array.from(
      { length: rows },
      (_, i) =>
        `C-${i};Comércio de Alimentos Irmãos Silva ${i} Ltda - ME;Mercado ${i};${cnpj(i)};Rua das Flores;${
          i % 900
        };Centro;Ana`
    )
    const file = put(
      dir,
      "clientes.csv",
      brazilianList(
        "Clientes - Novembro/2026",
        "Código;Razão Social;Nome Fantasia;CNPJ;Rua;Número;Bairro;Vendedor",
        body
      )
    )
    const map = yield* readProfile(put(dir, "clientes.map.json", JSON.stringify(profile)))
    return { file, map }
  })

describe("a mapped file, as its own rows tell it", () => {
  it.scopedLive("the duplicate tables are sized from the file's own rows, so they never grow again late in the file", () =>
    Effect.gen(function*() {
      const { file, map } = yield* clientes(yield* tempDir)
      const input = yield* openInput(file, { encoding: "auto", delimiter: "auto", map }, "customers")
      const { columns, parse } = yield* planInput(resource("customers"), input, {
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert"
      }, () => Effect.void)
      const settled = yield* settleFormats(columns, input.rows, parse)
      const validator = makeValidator(columns, settled.formats, parse)
      let seen = 0
      let valid = 0
      let heldEarly = 0
      yield* Stream.runForEach(settled.rows, (row) =>
        Effect.map(validator.validate(row), (result) => {
          if (result._tag === "Valid") valid++
          if (++seen === early) heldEarly = validator.heldBytes()
        }))
      assert.strictEqual(seen, rows)
      assert.strictEqual(valid, rows)
      // Each table holds every key the file has without growing after the first 15,000 rows.
      assert.isAbove(heldEarly, 0)
      assert.strictEqual(validator.heldBytes(), heldEarly)
    }))

  it.scopedLive("validate's progress counts the file's bytes, not the rewritten rows' characters", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { file, map } = yield* clientes(dir)
      let told = 0
      yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto", map },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: Path.join(dir, "run")
      }).pipe(Effect.provide(FileReadProgress.to({ read: (_, bytes) => Effect.sync(() => void (told += bytes)) })))
      // The data rows are all of the file but its title, header and footer lines (a line end is two bytes here).
      const size = statSync(file).size
      assert.isAbove(told, size * 0.95)
      assert.isAtMost(told, size)
    }))

  it.scopedLive("its encoding is the one the read found, even when the first 64 KiB are all ASCII", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      // 2,000 rows of plain ASCII (about 120 KiB), then accents in Windows-1252.
      const body = Array.from(
        { length: 2_400 },
        (_, i) => `C-${i};${i < 2_000 ? "Mercado Central" : "Açougue São João"} ${i};${cnpj(i)};Rua das Flores`
      )
      const file = put(dir, "clientes.csv", brazilianList("Clientes", "Codigo;Razao Social;CNPJ;Endereco", body))
      const map = yield* readProfile(put(
        dir,
        "clientes.map.json",
        JSON.stringify({
          resource: "customers",
          columns: { Codigo: "externalId", "Razao Social": "name", CNPJ: "cpfCnpj", Endereco: "address" }
        })
      ))
      const { summary } = yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto", map },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir: Path.join(dir, "run")
      })
      assert.strictEqual(summary.counts.valid, 2_400)
      assert.strictEqual(summary.formats?.encoding, "windows-1252")
    }))
})
