/**
 * The row mapping of export files, offline: read-back names mapped back, money strings to plain numbers, unset
 * dates to empty cells, lists and nested values in the importer's cell syntax, reference columns from keys.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import type { KeyLookup } from "../../src/export/Cells.js"
import { moneyToNumber, rowMapper } from "../../src/export/Cells.js"
import { exportNames, planExport } from "../../src/export/Walks.js"
import { exportColumns, resource, templateColumns } from "../../src/Resources.js"

const noKeys: KeyLookup = () => undefined

const rowOf = (name: Parameters<typeof resource>[0], record: Record<string, unknown>, keys: KeyLookup = noKeys) => {
  const mapper = rowMapper(resource(name))
  const cells = mapper.row(record, keys)
  return Object.fromEntries(mapper.header.map((h, i) => [h, cells[i]]))
}

describe("export cells", () => {
  it("reads pt-BR and dot money as plain numbers, and keeps text that is not money", () => {
    assert.strictEqual(moneyToNumber("12,00"), 12)
    assert.strictEqual(moneyToNumber("1.234,56"), 1234.56)
    assert.strictEqual(moneyToNumber("-0,5"), -0.5)
    assert.strictEqual(moneyToNumber("12.34"), 12.34)
    assert.strictEqual(moneyToNumber("a combinar"), "a combinar")
  })

  it("maps read-back names back to the template's columns", () => {
    assert.strictEqual(rowOf("users", { userID: 7, login: "ana" }).id, 7)
    assert.strictEqual(rowOf("tasks", { taskID: 9, externalId: "OS-1" }).id, 9)
    assert.strictEqual(
      rowOf("products", { code: 3, name: "Filtro", unitaryValue: "1.234,56", unitaryCost: "0,00" }).id,
      3
    )
    assert.strictEqual(rowOf("products", { code: 3, name: "Filtro", unitaryValue: "1.234,56" }).unitaryValue, 1234.56)
    assert.strictEqual(rowOf("services", { id: "a", price: "180.50" }).price, 180.5)
    assert.strictEqual(rowOf("tasks", { taskID: 1, expense: "0,00" }).expense, 0)
    assert.strictEqual(rowOf("customers", { id: 1, description: "Padaria" }).name, "Padaria")
    assert.strictEqual(rowOf("webhooks", { id: 1, urlResponse: "https://x/h" }).targetUrl, "https://x/h")
  })

  it("writes unset dates as empty cells and keeps set ones", () => {
    assert.strictEqual(
      rowOf("receivables", { id: 1, paidDate: "0001-01-01T00:00:00", dueDate: "2026-12-10T00:00:00" }).paidDate,
      ""
    )
    assert.strictEqual(
      rowOf("receivables", { id: 1, paidDate: "", dueDate: "2026-12-10T00:00:00" }).dueDate,
      "2026-12-10T00:00:00"
    )
  })

  it("reads every form the live service and its Blueprint send: names in any case, enum objects and labels, 0 for none", () => {
    assert.strictEqual(rowOf("users", { userId: 7, login: "ana" }).id, 7) // the Blueprint's userId
    assert.strictEqual(
      rowOf("users", { userID: 7, userType: { userTypeId: 2, description: "Team Manager" } }).userType,
      2
    )
    assert.strictEqual(rowOf("users", { userID: 7, userType: 3 }).userType, 3)
    assert.strictEqual(rowOf("customers", { id: 1, AdressComplement: "Loja 2" }).adressComplement, "Loja 2")
    const hook = rowOf("webhooks", {
      id: "4",
      entity: "Task",
      action: "inclusao",
      urlResponse: "https://x/h",
      active: "false"
    })
    assert.deepInclude(hook, { entity: 4, action: 1, active: false })
    const keys: KeyLookup = (name, _key, id) => (name === "segments" && id === "5" ? "Varejo" : undefined)
    assert.deepInclude(rowOf("customers", { id: 1, segmentId: 0, groupsId: [0] }, keys), {
      segmentId: "",
      segmentDescription: "",
      groupsId: ""
    })
    assert.deepInclude(rowOf("customers", { id: 1, segmentId: 5 }, keys), {
      segmentId: 5,
      segmentDescription: "Varejo"
    })
    assert.deepInclude(rowOf("tasks", { taskID: 1, taskType: 0, customerId: "" }), { taskType: "", customerId: "" })
    // What the server adds to nested items (contacts' ids) stays out of a file meant to be imported again.
    const contacts = rowOf("customers", { id: 1, contacts: [{ id: 1, name: "Carlos", Phone: "1" }] }).contacts
    assert.strictEqual(contacts, "[{\"name\":\"Carlos\",\"phone\":\"1\"}]")
  })

  it("joins lists with | and writes nested values as JSON", () => {
    const row = rowOf("customers", {
      id: 1,
      phoneNumber: ["+55 11 1", "+55 11 2"],
      groupsId: [4, 5],
      contacts: [{ name: "Carlos", phone: "1" }],
      active: true
    })
    assert.strictEqual(row.phoneNumber, "+55 11 1|+55 11 2")
    assert.strictEqual(row.groupsId, "4|5")
    assert.strictEqual(row.contacts, "[{\"name\":\"Carlos\",\"phone\":\"1\"}]")
    assert.strictEqual(row.active, true)
    assert.strictEqual(rowOf("customers", { id: 1, contacts: [] }).contacts, "")
  })

  it("fills reference columns with the referenced records' keys, in the order of the ids", () => {
    const keys: KeyLookup = (name, key, id) =>
      name === "customer-groups" && key === "description"
        ? ({ "4": "Redes", "5": "Hospitais" } as Record<string, string>)[id]
        : undefined
    const row = rowOf("customers", { id: 1, groupsId: [5, 4, 6] }, keys)
    assert.strictEqual(row.groupsDescription, "Hospitais|Redes")
    assert.strictEqual(row.groupsId, "5|4|6")
  })

  it("an export file's columns are the import template's, then the read-only ones", () => {
    for (const name of ["customers", "tasks", "tickets"] as const) {
      const header = rowMapper(resource(name)).header
      const template = templateColumns(resource(name)).map((c) => c.name)
      assert.deepStrictEqual(header.slice(0, template.length), template)
      assert.deepStrictEqual(header, exportColumns(resource(name)).map((c) => c.name))
    }
  })
})

describe("export plan", () => {
  it("walks referenced resources before the files that name them, and tasks after what their items name", () => {
    const walks = Either.getOrThrow(planExport([], "csv"))
    const at = (name: string) => walks.findIndex((w) => w.resource.name === name)
    assert.isBelow(at("users"), at("teams"))
    assert.isBelow(at("customers"), at("equipments"))
    assert.isBelow(at("equipments"), at("products"))
    assert.isBelow(at("products"), at("tasks"))
    assert.isBelow(at("additional-costs"), at("tasks"))
    assert.isBelow(at("customer-groups"), at("customer-group-clients"))
    const tasks = walks[at("tasks")]!
    assert.deepStrictEqual(
      tasks.outputs.map((o) => [o.resource.name, o.derivedFrom]),
      [
        ["tasks", undefined],
        ["task-products", "tasks"],
        ["task-services", "tasks"],
        ["task-additional-costs", "tasks"],
        ["questionnaire-answers", "tasks"]
      ]
    )
    assert.strictEqual(walks.flatMap((w) => w.outputs).length, exportNames.length)
  })

  it("a derived file alone walks its parent without writing the parent's file", () => {
    const walks = Either.getOrThrow(planExport(["task-products"], "xlsx"))
    assert.deepStrictEqual(walks.map((w) => [w.resource.name, w.outputs.map((o) => o.file)]), [["tasks", [
      "task-products.xlsx"
    ]]])
  })

  it("refuses names it cannot export, saying why", () => {
    const unknown = planExport(["customer"], "csv")
    assert.isTrue(Either.isLeft(unknown) && unknown.left.message.includes("unknown resource \"customer\""))
    const notAList = planExport(["customer-attachments"], "csv")
    assert.isTrue(Either.isLeft(notAList) && notAList.left.message.includes("the API has no list of it"))
  })
})
