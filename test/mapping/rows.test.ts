/**
 * The rows a mapping profile rewrites, pinned where the hot path was made cheaper: a Brazilian customer list's
 * report (the file's own cells, short and ragged rows, value maps in any case and accent, a composed field) stays
 * byte for byte what it was, and a value map's memory of the cell texts it has seen stays bounded.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import * as Path from "node:path"
import { runValidate } from "../../src/import/ValidateRun.js"
import { compileValueMap, valueMapMemory } from "../../src/mapping/Apply.js"
import { readProfile } from "../../src/mapping/Profile.js"
import { cp1252, put, tempDir } from "../import/support.js"
import { cnpj, messyProfile } from "./support.js"

/** Windows-1252, `;`, CRLF, a title row, a short row, a ragged row, a quoted `;`, a blank line, a Total footer. */
const clientes = cp1252(
  [
    "Relação de clientes - Novembro/2026;;;;;;;;;;",
    "Código;Nome;CNPJ;Rua;Número;Bairro;Telefone;E-mail;Situação;Vendedor;Observações",
    `C-1;Padaria São João;${cnpj(1)};Rua Augusta;100;Consolação;(11) 3333-4444;a@b.com.br;Ativo;Ana;`,
    `C-2;Açougue Boa Vista;${cnpj(2)};Av. Paulista;;Bela Vista;;;  ATIVO ;José;"Obs; com ""aspas"""`,
    `C-3;Mercearia Irmãos;${cnpj(3)};Rua XV;7`,
    `C-4;Farmácia Central;${cnpj(4)};Rua Direita;12;Centro;;;Não;Ana;;além do cabeçalho;`,
    `C-5;Bar do Zé;${cnpj(5)};;;;;;nao;José;`,
    `C-6;Loja Nova;${cnpj(6)};Rua B;1;Sé;;;Suspenso;Ana;`,
    "",
    `C-7;Sítio Bom;${cnpj(7)};Estrada;S/N;Zona Rural;;;Bloqueado;;`,
    "Total de clientes: 7;;;;;;;;;;"
  ].join("\r\n") + "\r\n"
)

const profile = {
  ...messyProfile,
  fields: { ...messyProfile.fields, active: { values: { "Ativo": "true", "Não": "false", "Bloqueado": "false" } } }
}

/**
 * report.csv as the build before the hot path's changes wrote it (2026-11-27, commit 28caeb8), but for the ragged
 * row's message, which named the 8 fields the profile fills as the header's width instead of the file's 11 columns.
 */
const expectedReport = [
  "\uFEFF_row,_status,_http_status,_request_id,_attempts,_retry_outcomes,_record_id,_error,Código,Nome,CNPJ,Rua," +
  "Número,Bairro,Telefone,E-mail,Situação,Vendedor,Observações",
  "3,valid,,,,,,,C-1,Padaria São João,10.000.001/0001-90,Rua Augusta,100,Consolação,(11) 3333-4444" +
  ",a@b.com.br,Ativo,Ana,",
  "4,valid,,,,,,,C-2,Açougue Boa Vista,10.000.002/0001-34,Av. Paulista,,Bela Vista,,,\"  ATIVO \"" +
  ",José,\"Obs; com \"\"aspas\"\"\"",
  "5,valid,,,,,,,C-3,Mercearia Irmãos,10.000.003/0001-89,Rua XV,7,,,,,,",
  "6,invalid,,,,," +
  ",\"(beyond the last column): 1 value beyond the header's 11 columns (\"\"além do cabeçalho\"\"); a value may hold an unquoted delimiter\"" +
  ",C-4,Farmácia Central,10.000.004/0001-23,Rua Direita,12,Centro,,,Não,Ana,,além do cabeçalho,",
  "7,valid,,,,,,,C-5,Bar do Zé,10.000.005/0001-78,,,,,,nao,José,",
  "8,invalid,,,,,,\"active: \"\"Suspenso\"\" is not a yes/no value (use true/false, sim/não, yes/no" +
  ", s/n, y/n, 1/0, x, verdadeiro/falso)\",C-6,Loja Nova,10.000.006/0001-12,Rua B,1,Sé,,,Suspenso" +
  ",Ana,",
  "10,valid,,,,,,,C-7,Sítio Bom,10.000.007/0001-67,Estrada,S/N,Zona Rural,,,Bloqueado,,",
  ""
].join("\r\n")

describe("rows through a mapping profile", () => {
  it.scopedLive("a Brazilian customer list's report keeps the file's own cells, byte for byte; a ragged row names the file's width", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", clientes)
      const map = yield* readProfile(put(dir, "clientes.map.json", JSON.stringify(profile)))
      const runDir = Path.join(dir, "run")
      yield* runValidate({
        resource: "customers",
        file,
        read: { encoding: "auto", delimiter: "auto", map },
        dateFormat: "auto",
        decimal: "auto",
        mode: "upsert",
        runDir
      })
      const report = readFileSync(Path.join(runDir, "report.csv"), "utf8")
      assert.strictEqual(report, expectedReport)
    }))

  it("a value map normalises each distinct text once and remembers a bounded number of them", () => {
    const active = compileValueMap({ "Sim": "true", "Não": "false" })
    assert.strictEqual(active.apply("Sim"), "true")
    assert.strictEqual(active.apply("SIM"), "true")
    assert.strictEqual(active.apply("nao"), "false")
    assert.strictEqual(active.apply("Talvez"), "Talvez")
    assert.strictEqual(active.apply(""), "")
    // A column of free text: every value distinct. What is remembered stops growing at the bound…
    for (let i = 0; i < 3 * valueMapMemory; i++) assert.strictEqual(active.apply(`Cliente ${i}`), `Cliente ${i}`)
    assert.strictEqual(active.remembered(), valueMapMemory)
    // …and the map still answers, for texts it remembers and for ones it no longer can.
    assert.strictEqual(active.apply("SIM"), "true")
    assert.strictEqual(active.apply("  não"), "false")
    assert.strictEqual(active.apply("NÃO"), "false")
    assert.strictEqual(active.remembered(), valueMapMemory)
  })
})
