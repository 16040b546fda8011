/**
 * Rows of real-world files through the whole offline chain (plan → formats → validator): the payload sent,
 * references left to resolve, keys winning over foreign ids, duplicates, modes, attachments on disk, the
 * formula guard, and the `_error` text of invalid rows.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { resource } from "../../src/Resources.js"
import { formatErrors, makeValidator, planColumns } from "../../src/validate/Validate.js"
import { invalid, options, valid, validateFile } from "./support.js"

const customers = [
  "id",
  "externalId",
  "name",
  "cpfCnpj",
  "phoneNumber",
  "email",
  "latitude",
  "longitude",
  "unitMaximumTime",
  "groupsId",
  "groupsDescription",
  "segmentId",
  "segmentDescription",
  "active",
  "contacts",
  "vendedor",
  "_status",
  "_error"
]

describe("payloads", () => {
  it.effect("turns a pt-BR customer row into the API's values, leaving out columns that are no field", () =>
    Effect.gen(function*() {
      const { formats, results } = yield* validateFile("customers", customers, [
        [
          "",
          "CLI-0001",
          "Padaria Pão Quente",
          "11.222.333/0001-81",
          "+55 11 3333-4444|+55 11 99999-0000",
          "contato@paoquente.com.br",
          "-23,5614",
          "-46,6559",
          "hours",
          "",
          "Redes de varejo|Zona Sul",
          "",
          "Supermercados",
          "Sim",
          "[{\"name\":\"Carlos Lima\",\"jobPosition\":\"Gerente\",\"ramal\":\"12\"}]",
          "Joana",
          "failed",
          "old error"
        ]
      ])
      assert.deepStrictEqual(formats, { dateFormat: "yyyy-mm-dd", decimal: "," })
      const row = valid(results[0])
      assert.strictEqual(row.row, 2)
      assert.deepStrictEqual(row.payload, {
        externalId: "CLI-0001",
        name: "Padaria Pão Quente",
        cpfCnpj: "11222333000181",
        phoneNumber: ["+55 11 3333-4444", "+55 11 99999-0000"],
        email: ["contato@paoquente.com.br"],
        latitude: -23.5614,
        longitude: -46.6559,
        unitMaximumTime: 2,
        active: true,
        contacts: [{ name: "Carlos Lima", jobPosition: "Gerente", ramal: "12" }]
      })
      assert.strictEqual(row.key, "CLI-0001")
      assert.isUndefined(row.id)
      assert.deepStrictEqual(row.refs, [
        {
          field: "groupsId",
          column: "groupsDescription",
          resource: "customer-groups",
          by: "description",
          values: ["Redes de varejo", "Zona Sul"],
          list: true
        },
        {
          field: "segmentId",
          column: "segmentDescription",
          resource: "segments",
          by: "description",
          values: ["Supermercados"],
          list: false
        }
      ])
      assert.deepStrictEqual(row.files, [])
      assert.deepStrictEqual(row.warnings, [
        `contacts: "ramal" is not a known property (name, jobPosition, email, phone); sent as given`
      ])
    }))

  it.effect("leaves empty cells out of the payload, and never sends tool columns", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", [
        "externalId",
        "name",
        "legalName",
        "active",
        "_row",
        "_status"
      ], [["CLI-2", "Mercado Bom Preço", "  ", "", "7", "invalid"]])
      assert.deepStrictEqual(valid(results[0]).payload, { externalId: "CLI-2", name: "Mercado Bom Preço" })
    }))

  it.effect("reports every wrong column of a row, in a message a spreadsheet user can act on", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile(
        "customers",
        ["externalId", "name", "cpfCnpj", "email", "latitude", "active", "unitMaximumTime"],
        [
          ["CLI-1", "Padaria", "11.222.333/0001-81", "a@b.com.br", "-23,5", "sim", "1"],
          ["CLI-2", "", "123.456.789-00", "carlos@", "-123,4", "talvez", "semanas"]
        ]
      )
      const row = invalid(results[1])
      assert.strictEqual(row.row, 3)
      assert.strictEqual(
        formatErrors(row.errors),
        [
          "name: required",
          `cpfCnpj: "123.456.789-00" has wrong check digits`,
          `email: "carlos@" is not an e-mail address`,
          `latitude: "-123,4" is out of range (-90 to 90)`,
          `active: "talvez" is not a yes/no value (use true/false, sim/não, yes/no, s/n, y/n, 1/0, x, verdadeiro/falso)`,
          `unitMaximumTime: "semanas" is not one of 1 (minutes), 2 (hours)`
        ].join("; ")
      )
    }))

  it.effect("a cell longer than Excel's 32,767 characters makes the row invalid, naming its column", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile(
        "customers",
        ["externalId", "name", "vendedor"],
        [
          ["CLI-1", "n".repeat(32_767), "v".repeat(32_767)],
          ["CLI-2", "Padaria", "v".repeat(40_000)]
        ]
      )
      assert.containSubset(valid(results[0]).payload, { externalId: "CLI-1" })
      const row = invalid(results[1])
      assert.strictEqual(row.row, 3)
      assert.strictEqual(
        formatErrors(row.errors),
        "vendedor: 40,000 characters: a cell holds at most 32,767 (Excel's limit)"
      )
    }))

  it.effect("reads dd/mm/yyyy task dates and enum labels, and keeps a password's spaces", () =>
    Effect.gen(function*() {
      const tasks = yield* validateFile(
        "tasks",
        ["externalId", "userFromLogin", "taskDate", "priority", "checkinType", "keyWordsDescription"],
        [
          ["OS-1", "ana.souza", "25/12/2026 09:30", "high", "Manual", "Urgente|Preventiva"],
          ["OS-2", "ana.souza", "03/01/2027", "1", "2", ""]
        ]
      )
      assert.strictEqual(tasks.formats.dateFormat, "dd/mm/yyyy")
      assert.deepStrictEqual(valid(tasks.results[0]).payload, {
        externalId: "OS-1",
        taskDate: "2026-12-25T09:30:00",
        priority: 3,
        checkinType: 1
      })
      assert.deepStrictEqual(valid(tasks.results[1]).payload, {
        externalId: "OS-2",
        taskDate: "2027-01-03T00:00:00",
        priority: 1,
        checkinType: 2
      })
      assert.deepStrictEqual(valid(tasks.results[0]).refs.map((r) => [r.field, r.values]), [
        ["idUserFrom", ["ana.souza"]],
        ["keyWords", ["Urgente", "Preventiva"]]
      ])

      const users = yield* validateFile(
        "users",
        ["externalId", "login", "password", "workDaysOfWeek", "startWorkHour"],
        [["USR-1", " ana.souza ", " Troque@2026 ", "2|3|4|5|6", "8:00"]]
      )
      assert.deepStrictEqual(valid(users.results[0]).payload, {
        externalId: "USR-1",
        login: "ana.souza",
        password: " Troque@2026 ",
        workDaysOfWeek: [2, 3, 4, 5, 6],
        startWorkHour: "08:00:00"
      })
    }))
})

describe("ids, keys and references", () => {
  it.effect("the key wins over the id: an export of another account imports by externalId", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", ["id", "externalId", "name"], [
        ["81234", "CLI-1", "Padaria"],
        ["81235", "", "Mercado"],
        ["not-an-id", "CLI-3", "Açougue"]
      ])
      const withKey = valid(results[0])
      assert.deepStrictEqual(withKey.payload, { externalId: "CLI-1", name: "Padaria" })
      assert.strictEqual(withKey.key, "CLI-1")
      assert.strictEqual(withKey.id, 81234)
      const idOnly = valid(results[1])
      assert.deepStrictEqual(idOnly.payload, { id: 81235, name: "Mercado" })
      assert.isUndefined(idOnly.key)
      assert.strictEqual(idOnly.id, 81235)
      // A foreign id is never sent when the key is given, so it is not checked either.
      assert.deepStrictEqual(valid(results[2]).payload, { externalId: "CLI-3", name: "Açougue" })
    }))

  it.effect("the key wins over a GUID id, and service orders are keyed over their code", () =>
    Effect.gen(function*() {
      const services = yield* validateFile("services", ["id", "externalCode", "title", "price"], [
        ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "SRV-LIMPEZA", "Limpeza de split", "180.00"],
        ["3f2504e0-4f89-11d3-9a0c-0305e82c3302", "", "Instalação", "350.00"],
        ["12", "", "Visita", "90.00"]
      ])
      assert.deepStrictEqual(valid(services.results[0]).payload, {
        externalCode: "SRV-LIMPEZA",
        title: "Limpeza de split",
        price: 180
      })
      assert.deepStrictEqual(valid(services.results[1]).payload, {
        id: "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
        title: "Instalação",
        price: 350
      })
      assert.strictEqual(
        formatErrors(invalid(services.results[2]).errors),
        `id: "12" is not a GUID (e.g. 3f2504e0-4f89-11d3-9a0c-0305e82c3301)`
      )

      const orders = yield* validateFile("service-orders", ["code", "externalId", "customerId"], [["77", "SO-1", "5"]])
      assert.deepStrictEqual(valid(orders.results[0]).payload, { externalId: "SO-1", customerId: 5 })
      assert.strictEqual(valid(orders.results[0]).id, 77)
    }))

  it.effect("a reference column wins over the id column; the id column alone is checked and sent", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("tasks", [
        "externalId",
        "idUserFrom",
        "userFromLogin",
        "customerId",
        "customerExternalId",
        "taskDate"
      ], [
        ["OS-1", "9", "ana.souza", "5", "CLI-0001", "2026-12-01"],
        ["OS-2", "9", "", "5", "", "2026-12-01"],
        ["OS-3", "0", "", "cinco", "", "2026-12-01"]
      ])
      const byKey = valid(results[0])
      assert.deepStrictEqual(byKey.payload, { externalId: "OS-1", taskDate: "2026-12-01T00:00:00" })
      assert.deepStrictEqual(byKey.refs, [
        {
          field: "idUserFrom",
          column: "userFromLogin",
          resource: "users",
          by: "login",
          values: ["ana.souza"],
          list: false
        },
        {
          field: "customerId",
          column: "customerExternalId",
          resource: "customers",
          by: "externalId",
          values: ["CLI-0001"],
          list: false
        }
      ])
      const byId = valid(results[1])
      assert.deepStrictEqual(byId.payload, {
        externalId: "OS-2",
        idUserFrom: 9,
        customerId: 5,
        taskDate: "2026-12-01T00:00:00"
      })
      assert.deepStrictEqual(byId.refs, [])
      assert.strictEqual(
        formatErrors(invalid(results[2]).errors),
        `idUserFrom: "0" is not a valid id (ids are whole numbers from 1 up); customerId: "cinco" is not a whole number`
      )
    }))

  it.effect("list references split on |: team members by login", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("teams", [
        "description",
        "participants",
        "participantsLogin",
        "managers",
        "managersLogin"
      ], [
        ["Equipe Zona Sul", "", "ana.souza | bruno.lima", "3|4", ""]
      ])
      const row = valid(results[0])
      assert.deepStrictEqual(row.payload, { description: "Equipe Zona Sul", managers: [3, 4] })
      assert.deepStrictEqual(row.refs, [{
        field: "participants",
        column: "participantsLogin",
        resource: "users",
        by: "login",
        values: ["ana.souza", "bruno.lima"],
        list: true
      }])
      assert.strictEqual(row.key, "Equipe Zona Sul")
    }))

  it.effect("a required reference is satisfied by either column, and named with both when missing", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("expenses", [
        "userToId",
        "userToLogin",
        "typeDescription",
        "date",
        "amount"
      ], [
        ["", "ana.souza", "Combustível", "2026-11-20", "42.50"],
        ["", "", "Combustível", "2026-11-20", "42.50"]
      ], { mode: "create" })
      assert.deepStrictEqual(valid(results[0]).payload, { date: "2026-11-20T00:00:00", amount: 42.5 })
      assert.strictEqual(formatErrors(invalid(results[1]).errors), "userToId: required: fill userToId or userToLogin")
    }))
})

describe("duplicates", () => {
  it.effect("a repeated key makes the later rows invalid, naming the first; compared case-insensitively", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", ["externalId", "name"], [
        ["CLI-1", "Padaria"],
        ["CLI-2", "Mercado"],
        ["CLI-1", "Padaria (cópia)"],
        ["cli-1", "Padaria (outra)"],
        ["", "Sem chave"],
        ["", "Sem chave"]
      ])
      // Rows without a key are no duplicates of each other; an upsert refuses them for want of a key.
      assert.deepStrictEqual(results.map((r) => r._tag), ["Valid", "Valid", "Invalid", "Invalid", "Invalid", "Invalid"])
      assert.match(formatErrors(invalid(results[4]).errors), /^externalId: no key: upsert finds each record by/)
      assert.strictEqual(formatErrors(invalid(results[2]).errors), `externalId: "CLI-1" repeats row 2`)
      assert.strictEqual(formatErrors(invalid(results[3]).errors), `externalId: "cli-1" repeats row 2`)
    }))

  it.effect("in a sub-collection the key repeats only within the same parent", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("task-products", [
        "taskExternalId",
        "productExternalId",
        "quantity",
        "value"
      ], [
        ["OS-1", "PRD-FILTRO-01", "2", "1"],
        ["OS-2", "PRD-FILTRO-01", "1", "1"],
        ["OS-1", "PRD-GAS-R410", "1", "1"],
        ["OS-1", "PRD-FILTRO-01", "3", "1"]
      ])
      assert.deepStrictEqual(results.map((r) => r._tag), ["Valid", "Valid", "Valid", "Invalid"])
      assert.strictEqual(
        formatErrors(invalid(results[3]).errors),
        `productExternalId: "PRD-FILTRO-01" repeats row 2 (same taskExternalId "OS-1")`
      )
      assert.strictEqual(valid(results[0]).key, "PRD-FILTRO-01")
      assert.deepStrictEqual(valid(results[0]).payload, { quantity: 2, value: 1 })
    }))

  it.effect("resources without a key have no duplicate check; unique fields do", () =>
    Effect.gen(function*() {
      const expenses = yield* validateFile("expenses", ["userToLogin", "typeDescription", "date", "amount"], [
        ["ana.souza", "Combustível", "2026-11-20", "42.50"],
        ["ana.souza", "Combustível", "2026-11-20", "42.50"]
      ], { mode: "create" })
      assert.deepStrictEqual(expenses.results.map((r) => r._tag), ["Valid", "Valid"])

      const users = yield* validateFile("users", ["externalId", "login"], [
        ["USR-1", "ana.souza"],
        ["USR-2", "Ana.Souza"]
      ])
      assert.strictEqual(
        formatErrors(invalid(users.results[1]).errors),
        `login: "Ana.Souza" repeats row 2; login must be unique in the account`
      )
    }))
})

describe("modes", () => {
  it.effect("update sends only the non-empty cells and needs an id or a key", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile(
        "customers",
        ["id", "externalId", "name", "active"],
        [
          ["", "CLI-1", "", "não"],
          ["42", "", "Novo nome", ""],
          ["", "", "Sem chave", "sim"]
        ],
        { mode: "update" }
      )
      assert.deepStrictEqual(valid(results[0]).payload, { externalId: "CLI-1", active: false })
      assert.deepStrictEqual(valid(results[1]).payload, { id: 42, name: "Novo nome" })
      assert.strictEqual(
        formatErrors(invalid(results[2]).errors),
        "id: needed to find the record to update: fill id or externalId"
      )
    }))

  it.effect("delete checks nothing but the id or key (and the parent)", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile(
        "customers",
        ["id", "externalId", "name", "cpfCnpj", "latitude", "vendedor"],
        [
          ["", "CLI-1", "", "not a cpf", "north", "x"],
          ["17", "", "", "", "", ""],
          ["zero", "", "", "", "", ""],
          ["", "", "Sem chave", "", "", ""]
        ],
        { mode: "delete" }
      )
      assert.deepStrictEqual(valid(results[0]).payload, { externalId: "CLI-1" })
      assert.deepStrictEqual(valid(results[1]).payload, { id: 17 })
      assert.strictEqual(formatErrors(invalid(results[2]).errors), `id: "zero" is not a whole number`)
      assert.strictEqual(
        formatErrors(invalid(results[3]).errors),
        "id: needed to find the record to delete: fill id or externalId"
      )

      const items = yield* validateFile("task-products", ["taskExternalId", "productExternalId", "quantity"], [[
        "",
        "PRD-1",
        "muitos"
      ]], { mode: "delete" })
      assert.strictEqual(
        formatErrors(invalid(items.results[0]).errors),
        "taskExternalId: needed to find the record to delete: fill taskExternalId"
      )
    }))

  it.effect("required fields are not required for update", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("tasks", ["externalId", "priority"], [["OS-1", "medium"]], {
        mode: "update"
      })
      assert.deepStrictEqual(valid(results[0]).payload, { externalId: "OS-1", priority: 2 })
    }))
})

describe("attachments", () => {
  const dir = mkdtempSync(join(tmpdir(), "fsm-validate-"))
  mkdirSync(join(dir, "anexos"))
  writeFileSync(join(dir, "anexos", "contrato.pdf"), Buffer.alloc(2048, 1))
  writeFileSync(join(dir, "anexos", "planta grande.dwg"), Buffer.alloc(5000, 1))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it.effect("a file column names a file relative to the workbook; the payload gets nothing for it", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile(
        "customer-attachments",
        ["customerExternalId", "file", "name"],
        [
          ["CLI-1", "anexos/contrato.pdf", "Contrato 2026.pdf"],
          ["CLI-1", "anexos\\contrato.pdf", ""],
          ["CLI-2", "anexos/nao-existe.pdf", ""],
          ["CLI-2", "anexos", ""],
          ["CLI-3", "anexos/planta grande.dwg", ""],
          ["", "", ""]
        ],
        { baseDir: dir, maxAttachmentBytes: 4096 }
      )
      const ok = valid(results[0])
      assert.deepStrictEqual(ok.payload, { name: "Contrato 2026.pdf" })
      assert.deepStrictEqual(ok.files, [{
        field: "file",
        path: join(dir, "anexos", "contrato.pdf"),
        name: "contrato.pdf",
        bytes: 2048,
        maxBytes: 4096
      }])
      assert.deepStrictEqual(ok.refs, [{
        field: "id",
        column: "customerExternalId",
        resource: "customers",
        by: "externalId",
        values: ["CLI-1"],
        list: false
      }])
      assert.strictEqual(valid(results[1]).files[0]?.path, join(dir, "anexos", "contrato.pdf"))
      assert.strictEqual(
        formatErrors(invalid(results[2]).errors),
        `file: "anexos/nao-existe.pdf" not found (looked for ${join(dir, "anexos", "nao-existe.pdf")})`
      )
      assert.strictEqual(formatErrors(invalid(results[3]).errors), `file: "anexos" is a folder, not a file`)
      assert.strictEqual(
        formatErrors(invalid(results[4]).errors),
        `file: "anexos/planta grande.dwg" is 4.9 KiB; attachments are limited to 4 KiB`
      )
      assert.strictEqual(formatErrors(invalid(results[5]).errors), "customerExternalId: required; file: required")
    }))
})

describe("cells as files carry them", () => {
  it.effect("a =… cell in a user's file is plain text, sent unchanged", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", ["externalId", "name", "note"], [[
        "CLI-1",
        "=Padaria",
        "'=SUM(A1:A3)"
      ]], { restoreGuard: false })
      assert.deepStrictEqual(valid(results[0]).payload, { externalId: "CLI-1", name: "=Padaria", note: "'=SUM(A1:A3)" })
    }))

  it.effect("in a file this tool wrote, the formula guard is undone", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", ["externalId", "name", "note", "foo"], [[
        "CLI-1",
        "'=Padaria",
        "'+55 11 3333-4444",
        "'@home"
      ]], { restoreGuard: true, send: ["foo"] })
      assert.deepStrictEqual(valid(results[0]).payload, {
        externalId: "CLI-1",
        name: "=Padaria",
        note: "+55 11 3333-4444",
        foo: "@home"
      })
    }))

  it.effect("a row longer than the header is refused: its cells no longer line up", () =>
    Effect.gen(function*() {
      const opts = options()
      const plan = yield* planColumns(resource("customers"), "c.csv", ["externalId", "name"], opts)
      const validator = makeValidator(plan, { dateFormat: "yyyy-mm-dd", decimal: "." }, opts)
      const result = yield* validator.validate({
        row: 9,
        cells: ["CLI-1", "Padaria", " Pão Quente", "SP"],
        ragged: true
      })
      assert.strictEqual(
        formatErrors(invalid(result).errors),
        `(beyond the last column): 2 values beyond the header's 2 columns (" Pão Quente", "SP"); a value may hold an unquoted delimiter`
      )
      // Missing trailing cells of a short row read as empty.
      assert.deepStrictEqual(valid(yield* validator.validate({ row: 10, cells: ["CLI-2", "Mercado"] })).payload, {
        externalId: "CLI-2",
        name: "Mercado"
      })
      assert.strictEqual(
        formatErrors(invalid(yield* validator.validate({ row: 11, cells: ["CLI-3"] })).errors),
        "name: required"
      )
    }))
})
