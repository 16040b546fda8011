/**
 * Rows of real-world files through the whole offline chain (plan → formats → validator): the payload sent,
 * references left to resolve, keys winning over foreign ids, duplicates, modes, attachments on disk, the
 * formula guard, and the `_error` text of invalid rows.
 */
import { describe, expect, it } from "@effect/vitest"
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
  it.effect("turns a pt-BR customer row into the API's values, keeping unknown columns as text", () =>
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
      expect(formats).toEqual({ dateFormat: "yyyy-mm-dd", decimal: "," })
      const row = valid(results[0])
      expect(row.row).toBe(2)
      expect(row.payload).toEqual({
        externalId: "CLI-0001",
        name: "Padaria Pão Quente",
        cpfCnpj: "11222333000181",
        phoneNumber: ["+55 11 3333-4444", "+55 11 99999-0000"],
        email: ["contato@paoquente.com.br"],
        latitude: -23.5614,
        longitude: -46.6559,
        unitMaximumTime: 2,
        active: true,
        contacts: [{ name: "Carlos Lima", jobPosition: "Gerente", ramal: "12" }],
        vendedor: "Joana"
      })
      expect(row.key).toBe("CLI-0001")
      expect(row.id).toBeUndefined()
      expect(row.refs).toEqual([
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
      expect(row.files).toEqual([])
      expect(row.warnings).toEqual([
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
      expect(valid(results[0]).payload).toEqual({ externalId: "CLI-2", name: "Mercado Bom Preço" })
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
      expect(row.row).toBe(3)
      expect(formatErrors(row.errors)).toBe(
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
      expect(valid(results[0]).payload).toMatchObject({ externalId: "CLI-1" })
      const row = invalid(results[1])
      expect(row.row).toBe(3)
      expect(formatErrors(row.errors)).toBe("vendedor: 40,000 characters: a cell holds at most 32,767 (Excel's limit)")
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
      expect(tasks.formats.dateFormat).toBe("dd/mm/yyyy")
      expect(valid(tasks.results[0]).payload).toEqual({
        externalId: "OS-1",
        taskDate: "2026-12-25T09:30:00",
        priority: 3,
        checkinType: 1
      })
      expect(valid(tasks.results[1]).payload).toEqual({
        externalId: "OS-2",
        taskDate: "2027-01-03T00:00:00",
        priority: 1,
        checkinType: 2
      })
      expect(valid(tasks.results[0]).refs.map((r) => [r.field, r.values])).toEqual([
        ["idUserFrom", ["ana.souza"]],
        ["keyWords", ["Urgente", "Preventiva"]]
      ])

      const users = yield* validateFile(
        "users",
        ["externalId", "login", "password", "workDaysOfWeek", "startWorkHour"],
        [["USR-1", " ana.souza ", " Troque@2026 ", "2|3|4|5|6", "8:00"]]
      )
      expect(valid(users.results[0]).payload).toEqual({
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
      expect(withKey.payload).toEqual({ externalId: "CLI-1", name: "Padaria" })
      expect(withKey.key).toBe("CLI-1")
      expect(withKey.id).toBe(81234)
      const idOnly = valid(results[1])
      expect(idOnly.payload).toEqual({ id: 81235, name: "Mercado" })
      expect(idOnly.key).toBeUndefined()
      expect(idOnly.id).toBe(81235)
      // A foreign id is never sent when the key is given, so it is not checked either.
      expect(valid(results[2]).payload).toEqual({ externalId: "CLI-3", name: "Açougue" })
    }))

  it.effect("the key wins over a GUID id, and service orders are keyed over their code", () =>
    Effect.gen(function*() {
      const services = yield* validateFile("services", ["id", "externalCode", "title", "price"], [
        ["3f2504e0-4f89-11d3-9a0c-0305e82c3301", "SRV-LIMPEZA", "Limpeza de split", "180.00"],
        ["3f2504e0-4f89-11d3-9a0c-0305e82c3302", "", "Instalação", "350.00"],
        ["12", "", "Visita", "90.00"]
      ])
      expect(valid(services.results[0]).payload).toEqual({
        externalCode: "SRV-LIMPEZA",
        title: "Limpeza de split",
        price: 180
      })
      expect(valid(services.results[1]).payload).toEqual({
        id: "3f2504e0-4f89-11d3-9a0c-0305e82c3302",
        title: "Instalação",
        price: 350
      })
      expect(formatErrors(invalid(services.results[2]).errors)).toBe(
        `id: "12" is not a GUID (e.g. 3f2504e0-4f89-11d3-9a0c-0305e82c3301)`
      )

      const orders = yield* validateFile("service-orders", ["code", "externalId", "customerId"], [["77", "SO-1", "5"]])
      expect(valid(orders.results[0]).payload).toEqual({ externalId: "SO-1", customerId: 5 })
      expect(valid(orders.results[0]).id).toBe(77)
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
      expect(byKey.payload).toEqual({ externalId: "OS-1", taskDate: "2026-12-01T00:00:00" })
      expect(byKey.refs).toEqual([
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
      expect(byId.payload).toEqual({
        externalId: "OS-2",
        idUserFrom: 9,
        customerId: 5,
        taskDate: "2026-12-01T00:00:00"
      })
      expect(byId.refs).toEqual([])
      expect(formatErrors(invalid(results[2]).errors)).toBe(
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
      expect(row.payload).toEqual({ description: "Equipe Zona Sul", managers: [3, 4] })
      expect(row.refs).toEqual([{
        field: "participants",
        column: "participantsLogin",
        resource: "users",
        by: "login",
        values: ["ana.souza", "bruno.lima"],
        list: true
      }])
      expect(row.key).toBe("Equipe Zona Sul")
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
      expect(valid(results[0]).payload).toEqual({ date: "2026-11-20T00:00:00", amount: 42.5 })
      expect(formatErrors(invalid(results[1]).errors)).toBe("userToId: required: fill userToId or userToLogin")
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
      expect(results.map((r) => r._tag)).toEqual(["Valid", "Valid", "Invalid", "Invalid", "Valid", "Valid"])
      expect(formatErrors(invalid(results[2]).errors)).toBe(`externalId: "CLI-1" repeats row 2`)
      expect(formatErrors(invalid(results[3]).errors)).toBe(`externalId: "cli-1" repeats row 2`)
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
      expect(results.map((r) => r._tag)).toEqual(["Valid", "Valid", "Valid", "Invalid"])
      expect(formatErrors(invalid(results[3]).errors)).toBe(
        `productExternalId: "PRD-FILTRO-01" repeats row 2 (same taskExternalId "OS-1")`
      )
      expect(valid(results[0]).key).toBe("PRD-FILTRO-01")
      expect(valid(results[0]).payload).toEqual({ quantity: 2, value: 1 })
    }))

  it.effect("resources without a key have no duplicate check; unique fields do", () =>
    Effect.gen(function*() {
      const expenses = yield* validateFile("expenses", ["userToLogin", "typeDescription", "date", "amount"], [
        ["ana.souza", "Combustível", "2026-11-20", "42.50"],
        ["ana.souza", "Combustível", "2026-11-20", "42.50"]
      ], { mode: "create" })
      expect(expenses.results.map((r) => r._tag)).toEqual(["Valid", "Valid"])

      const users = yield* validateFile("users", ["externalId", "login"], [
        ["USR-1", "ana.souza"],
        ["USR-2", "Ana.Souza"]
      ])
      expect(formatErrors(invalid(users.results[1]).errors)).toBe(
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
      expect(valid(results[0]).payload).toEqual({ externalId: "CLI-1", active: false })
      expect(valid(results[1]).payload).toEqual({ id: 42, name: "Novo nome" })
      expect(formatErrors(invalid(results[2]).errors)).toBe(
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
      expect(valid(results[0]).payload).toEqual({ externalId: "CLI-1" })
      expect(valid(results[1]).payload).toEqual({ id: 17 })
      expect(formatErrors(invalid(results[2]).errors)).toBe(`id: "zero" is not a whole number`)
      expect(formatErrors(invalid(results[3]).errors)).toBe(
        "id: needed to find the record to delete: fill id or externalId"
      )

      const items = yield* validateFile("task-products", ["taskExternalId", "productExternalId", "quantity"], [[
        "",
        "PRD-1",
        "muitos"
      ]], { mode: "delete" })
      expect(formatErrors(invalid(items.results[0]).errors)).toBe(
        "taskExternalId: needed to find the record to delete: fill taskExternalId"
      )
    }))

  it.effect("required fields are not required for update", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("tasks", ["externalId", "priority"], [["OS-1", "medium"]], {
        mode: "update"
      })
      expect(valid(results[0]).payload).toEqual({ externalId: "OS-1", priority: 2 })
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
      expect(ok.payload).toEqual({ name: "Contrato 2026.pdf" })
      expect(ok.files).toEqual([{
        field: "file",
        path: join(dir, "anexos", "contrato.pdf"),
        name: "contrato.pdf",
        bytes: 2048,
        maxBytes: 4096
      }])
      expect(ok.refs).toEqual([{
        field: "id",
        column: "customerExternalId",
        resource: "customers",
        by: "externalId",
        values: ["CLI-1"],
        list: false
      }])
      expect(valid(results[1]).files[0]?.path).toBe(join(dir, "anexos", "contrato.pdf"))
      expect(formatErrors(invalid(results[2]).errors)).toBe(
        `file: "anexos/nao-existe.pdf" not found (looked for ${join(dir, "anexos", "nao-existe.pdf")})`
      )
      expect(formatErrors(invalid(results[3]).errors)).toBe(`file: "anexos" is a folder, not a file`)
      expect(formatErrors(invalid(results[4]).errors)).toBe(
        `file: "anexos/planta grande.dwg" is 4.9 KiB; attachments are limited to 4 KiB`
      )
      expect(formatErrors(invalid(results[5]).errors)).toBe("customerExternalId: required; file: required")
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
      expect(valid(results[0]).payload).toEqual({ externalId: "CLI-1", name: "=Padaria", note: "'=SUM(A1:A3)" })
    }))

  it.effect("in a file this tool wrote, the formula guard is undone", () =>
    Effect.gen(function*() {
      const { results } = yield* validateFile("customers", ["externalId", "name", "note", "foo"], [[
        "CLI-1",
        "'=Padaria",
        "'+55 11 3333-4444",
        "'@home"
      ]], { restoreGuard: true })
      expect(valid(results[0]).payload).toEqual({
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
      expect(formatErrors(invalid(result).errors)).toBe(
        `(beyond the last column): 2 values beyond the header's 2 columns (" Pão Quente", "SP"); a value may hold an unquoted delimiter`
      )
      // Missing trailing cells of a short row read as empty.
      expect(valid(yield* validator.validate({ row: 10, cells: ["CLI-2", "Mercado"] })).payload).toEqual({
        externalId: "CLI-2",
        name: "Mercado"
      })
      expect(formatErrors(invalid(yield* validator.validate({ row: 11, cells: ["CLI-3"] })).errors)).toBe(
        "name: required"
      )
    }))
})
