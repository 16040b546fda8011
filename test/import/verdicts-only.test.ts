/**
 * `submit`'s check of a file writes what it reads and nothing more (issue 29, the scale smoke's start): a fleet's
 * `submit` validates the file into a scratch folder, reads the verdicts of report.csv and removes the folder. The
 * report.xlsx and report.html it also wrote were read by no one (about a tenth of a 500-row submit's CPU). With
 * `verdictsOnly` the run writes report.csv and summary.json only, and they are the same as a full run's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { runValidate } from "../../src/import/ValidateRun.js"
import { tempDir } from "./support.js"

/** A customer's file: Windows-1252, `;`, CRLF, Portuguese headers, one CPF with wrong check digits. */
const clientes = (dir: string) => {
  const text = [
    "Código;Nome;CPF/CNPJ;E-mail",
    "C-1;Padaria São João;529.982.247-25;contato@padaria.com.br",
    "C-2;Açougue Conceição;111.444.777-35;acougue@x.com.br",
    "C-3;Farmácia Três Irmãos;529.982.247-26;farmacia@x.com.br",
    ""
  ].join("\r\n")
  const file = Path.join(dir, "clientes.csv")
  writeFileSync(file, Buffer.from(text, "latin1"))
  return file
}

const validate = (file: string, runDir: string, verdictsOnly: boolean) =>
  runValidate({
    resource: "customers",
    file,
    runDir,
    read: { encoding: "auto", delimiter: "auto" },
    dateFormat: "auto",
    decimal: "auto",
    mode: "upsert",
    verdictsOnly
  })

describe("validate for a program (verdictsOnly)", () => {
  it.scopedLive("writes report.csv and summary.json only, the same as a full run's", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = clientes(dir)
      const full = yield* validate(file, Path.join(dir, "full"), false)
      const lean = yield* validate(file, Path.join(dir, "lean"), true)
      assert.deepStrictEqual(readdirSync(full.runDir).sort(), [
        "report.csv",
        "report.html",
        "report.xlsx",
        "summary.json"
      ])
      assert.deepStrictEqual(readdirSync(lean.runDir).sort(), ["report.csv", "summary.json"])
      assert.strictEqual(
        readFileSync(Path.join(lean.runDir, "report.csv"), "utf8"),
        readFileSync(Path.join(full.runDir, "report.csv"), "utf8")
      )
      assert.deepStrictEqual([lean.exitCode, lean.summary.rows, lean.summary.counts], [
        full.exitCode,
        full.summary.rows,
        full.summary.counts
      ])
      assert.deepStrictEqual(
        [lean.summary.counts.valid, lean.summary.counts.invalid],
        [2, 1],
        JSON.stringify(lean.summary.counts)
      )
      assert.deepStrictEqual(lean.formats, full.formats)
    }))
})
