/** `map`'s proposals on files with Portuguese and English headers, a title row, and values whose shape names them. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { openSource } from "../../src/files/Read.js"
import { distinctValues, propose, sampleOf } from "../../src/mapping/Propose.js"
import { resource } from "../../src/Resources.js"
import { cp1252, put, tempDir } from "../import/support.js"

const proposeFor = (name: "customers" | "users", path: string) =>
  Effect.gen(function*() {
    const source = yield* openSource(path, { encoding: "auto", delimiter: "auto", resource: name, lenientHeader: true })
    const { candidates } = yield* sampleOf(source, undefined)
    return { source, ...propose(resource(name), candidates, {}) }
  })

const fieldOf = (p: ReturnType<typeof propose>, column: string) => p.proposals.find((x) => x.source === column)?.field

describe("map: proposals", () => {
  it.scopedLive("Portuguese headers under a title row; accents and case ignored; internal columns ignored; key from CNPJ", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        cp1252(
          [
            "Relação de clientes;;;;;;",
            "NOME;Cnpj;Endereco;Telefone;E-mail;Ativo;Vendedor",
            "Padaria;11.222.333/0001-81;Rua A, 1;(11) 3333-4444;a@b.com.br;Sim;Ana"
          ].join("\r\n")
        )
      )
      const p = yield* proposeFor("customers", file)
      assert.strictEqual(p.headerRow, 2)
      assert.strictEqual(fieldOf(p, "NOME"), "name")
      assert.strictEqual(fieldOf(p, "Cnpj"), "cpfCnpj")
      assert.strictEqual(fieldOf(p, "Endereco"), "address")
      assert.strictEqual(fieldOf(p, "Telefone"), "phoneNumber")
      assert.strictEqual(fieldOf(p, "E-mail"), "email")
      assert.strictEqual(fieldOf(p, "Ativo"), "active")
      assert.isUndefined(fieldOf(p, "Vendedor"))
      assert.strictEqual(p.profile.columns!["Vendedor"], "ignore")
      assert.deepStrictEqual(p.profile.fields, { externalId: { compose: "{Cnpj}" } })
      assert.deepStrictEqual(p.missing, [])
    }))

  it.scopedLive("English headers and the table's labels; unnamed columns matched by the shape of their values; required fields left unmapped are named", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "customers.csv",
        [
          "Code,Legal name,Doc,Contact e-mail,Lat,Lng,Enabled",
          "C-1,Padaria Ltda,529.982.247-25,ana@x.com,-23.5614,-46.6559,yes",
          "C-2,Açougue Ltda,11.222.333/0001-81,bia@y.com,-22.9,-43.2,no"
        ].join("\n")
      )
      const p = yield* proposeFor("customers", file)
      assert.strictEqual(fieldOf(p, "Code"), "externalId")
      assert.strictEqual(fieldOf(p, "Legal name"), "legalName")
      assert.strictEqual(fieldOf(p, "Doc"), "cpfCnpj")
      assert.strictEqual(fieldOf(p, "Contact e-mail"), "email")
      assert.match(p.proposals.find((x) => x.source === "Contact e-mail")!.why, /e-mail/)
      assert.strictEqual(fieldOf(p, "Lat"), "latitude")
      assert.strictEqual(fieldOf(p, "Lng"), "longitude")
      assert.strictEqual(fieldOf(p, "Enabled"), "active")
      assert.strictEqual(p.proposals.find((x) => x.source === "Enabled")!.confidence, "medium")
      assert.deepStrictEqual(p.missing, ["name"])
    }))

  it.scopedLive("--values: distinct values with counts, those the field cannot read marked", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "c.csv", "name,Situação\nA,Ativo\nB,Bloqueado\nC,Ativo\nD,Sim\n")
      const p = yield* proposeFor("customers", file)
      assert.strictEqual(fieldOf(p, "Situação"), "active")
      const lists = yield* distinctValues(resource("customers"), p.source.rows, p.headerRow, [
        { index: 1, source: "Situação", field: "active" }
      ])
      assert.deepStrictEqual(lists[0]!.values, [
        { value: "Ativo", count: 2, readAsIs: false },
        { value: "Bloqueado", count: 1, readAsIs: false },
        { value: "Sim", count: 1, readAsIs: true }
      ])
    }))
})
