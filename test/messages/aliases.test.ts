/**
 * Portuguese names of resources and columns (src/Aliases.ts): each names exactly one thing, none is another
 * resource's or column's name, and a file whose header is in Portuguese reads as its English template.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  columnByAlias,
  foldName,
  portugueseColumnNames,
  portugueseResourceNames,
  resourceNamed
} from "../../src/Aliases.js"
import { exportColumns, resource, resourceNames, resources } from "../../src/Resources.js"
import { planColumns } from "../../src/validate/Columns.js"
import { options } from "../validate/support.js"

describe("Portuguese names", () => {
  it("name one resource each, and none is another resource's English name", () => {
    const english = new Set<string>(resourceNames)
    const seen = new Map<string, string>()
    for (const name of resourceNames) {
      const pt = portugueseResourceNames[name]
      if (pt === null) continue
      const folded = foldName(pt)
      assert.isFalse(english.has(folded), `${pt} is an English resource name`)
      assert.isUndefined(seen.get(folded), `${pt} names ${seen.get(folded)} and ${name}`)
      seen.set(folded, name)
      assert.strictEqual(resourceNamed(pt), name)
    }
    assert.strictEqual(resourceNamed("Clientes"), "customers")
    assert.strictEqual(resourceNamed("ordens de serviço"), "service-orders")
    assert.strictEqual(resourceNamed("EQUIPAMENTOS"), "equipments")
    assert.strictEqual(resourceNamed("customers"), "customers")
    assert.strictEqual(resourceNamed("webhooks"), "webhooks")
    assert.isUndefined(resourceNamed("clientez"))
  })

  it("name one column each, and in no resource is an alias the name of another of its columns", () => {
    const seen = new Map<string, string>()
    for (const [column, alias] of Object.entries(portugueseColumnNames)) {
      const folded = foldName(alias)
      assert.isUndefined(seen.get(folded), `${alias} names ${seen.get(folded)} and ${column}`)
      seen.set(folded, column)
    }
    const problems: Array<string> = []
    let used = 0
    for (const r of resources.values()) {
      const columns = exportColumns(r)
      for (const c of columns) {
        const alias = portugueseColumnNames[c.name]
        if (alias === undefined) continue
        used++
        const clash = columns.find((o) => o !== c && foldName(o.name) === foldName(alias))
        if (clash !== undefined) problems.push(`${r.name}: ${alias} (${c.name}) is also column ${clash.name}`)
        if (columnByAlias(alias, columns) !== c) problems.push(`${r.name}: ${alias} does not read as ${c.name}`)
      }
    }
    assert.deepStrictEqual(problems, [])
    // Every alias is used by some resource (a misspelt column name in the table would be a dead alias).
    assert.strictEqual(
      Object.keys(portugueseColumnNames).filter((c) =>
        ![...resources.values()].some((r) => exportColumns(r).some((x) => x.name === c))
      ).join(),
      ""
    )
    assert.isAbove(used, 40)
  })

  it.effect("a Portuguese header reads as the template's columns; an English header is unchanged", () =>
    Effect.gen(function*() {
      const header = ["Código", "Nome", "E-mail", "Telefone", "CPF/CNPJ", "Razão social", "Cidade"]
      const plan = yield* planColumns(resource("customers"), "clientes.csv", header, options())
      assert.deepStrictEqual(
        plan.columns.map((c) => [c.name, c.kind, c.column?.name]),
        [
          ["Código", "field", "externalId"],
          ["Nome", "field", "name"],
          ["E-mail", "field", "email"],
          ["Telefone", "field", "phoneNumber"],
          ["CPF/CNPJ", "field", "cpfCnpj"],
          ["Razão social", "field", "legalName"],
          ["Cidade", "unknown", undefined]
        ]
      )
      // A file that has both the English and the Portuguese name of one column is refused, not guessed.
      const both = yield* Effect.flip(
        planColumns(resource("customers"), "clientes.csv", ["externalId", "name", "Nome"], options())
      )
      assert.include(both.message, `columns "name" and "Nome" both give name`)
    }))
})
