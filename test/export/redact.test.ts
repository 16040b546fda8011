/**
 * `export --redact pii --redact-key FILE`: no original e-mail, phone, CPF/CNPJ or name of a person survives in any
 * file of the export (csv, xlsx, fingerprints); the same value gets the same fake in every file and in every export
 * made with the same key, another key gives other fakes; fakes keep their form (valid CPF/CNPJ with its
 * punctuation, e-mails, phones' shape); keys and ids are untouched; the manifest says what was redacted (not the
 * key); the redacted export verifies, imports into an empty sandbox and seeds one (`sandbox --seed`).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readdirSync, readFileSync, statSync } from "node:fs"
import * as Path from "node:path"
import { sameRun } from "../../src/export/Checkpoint.js"
import { readExportCopy } from "../../src/export/Copy.js"
import type { ExportRequest } from "../../src/export/Export.js"
import type { ExportFormat } from "../../src/export/Manifest.js"
import { loadRedactKey, makeRedactor, planRedaction } from "../../src/export/Redact.js"
import { runVerify } from "../../src/export/Verify.js"
import type { PersonalKind } from "../../src/Resources.js"
import { importable, resource, resources } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { parseCpfCnpj } from "../../src/validate/CpfCnpj.js"
import { Invalid } from "../../src/validate/Invalid.js"
import { importInto, readReport } from "../import/support.js"
import { oncePerFile } from "../support.js"
import { accountA, exportAll, readCsv, seededSandbox, startTestSandbox, tempDir } from "./support.js"

/** The seeded account, once for the file: its tests only export it (each seeded its own). */
const seeded = oncePerFile(seededSandbox)

const redactorWith = (keyFile: string, out: string, spec = "pii") =>
  Effect.gen(function*() {
    const plan = yield* planRedaction(spec)
    return makeRedactor(plan, yield* loadRedactKey(keyFile, out, () => Effect.void))
  })

const exportTo = (
  sandbox: RunningSandbox,
  out: string,
  extra: Partial<ExportRequest> = {},
  format: ExportFormat = "csv"
) => exportAll(sandbox, out, format, extra)

/**
 * Every value of a personal field in an unredacted csv export (contacts' members too), and the forms in which it
 * must not appear: as written, and for phones and CPF/CNPJ also as bare digits. An address's or a name's digits
 * ("1000" of "Av. Paulista, 1000") are no such form: four digits turn up by chance in any fingerprint's hex.
 */
const personalValues = (dir: string): ReadonlyMap<string, ReadonlyArray<string>> => {
  const values = new Map<string, Array<string>>()
  const add = (kind: PersonalKind, value: string) => {
    const digits = value.replace(/\D/g, "")
    values.set(value, kind === "phone" || kind === "cpfCnpj" ? [value, digits] : [value])
  }
  for (const r of resources.values()) {
    const file = Path.join(dir, `${r.name}.csv`)
    if (!readdirSync(dir).includes(`${r.name}.csv`)) continue
    const table = readCsv(file)
    for (const field of r.fields) {
      const personal = field.personal
      if (personal === undefined) continue
      for (const row of table.rows) {
        const cell = (row[field.name] ?? "").replace(/^'/, "")
        if (cell === "") continue
        if (typeof personal === "object") {
          for (const item of JSON.parse(cell) as Array<Record<string, string>>) {
            for (const [member, kind] of Object.entries(personal.members)) if (item[member]) add(kind, item[member])
          }
        } else {
          for (const item of field.list ? cell.split("|") : [cell]) add(personal, item.replace(/^'/, ""))
        }
      }
    }
  }
  return values
}

/** The text of every file of an export: csv and ndjson as they are, xlsx cell by cell. */
const exportText = (dir: string) =>
  Effect.promise(async () => {
    let text = ""
    for (const name of readdirSync(dir)) {
      const file = Path.join(dir, name)
      if (name.endsWith(".xlsx")) {
        const workbook = new ExcelJS.Workbook()
        await workbook.xlsx.readFile(file)
        workbook.eachSheet((sheet) => sheet.eachRow((row) => row.eachCell((cell) => (text += `${cell.text}\n`))))
      } else {
        text += readFileSync(file, "utf8")
      }
    }
    return text
  })

/**
 * The seeded account's whole export redacted as csv with a key of its own, once for the file: the first test holds it
 * to the redaction, the last imports it and seeds a sandbox from it; neither changes it (each made its own before).
 */
const redactedCsv = oncePerFile(
  Effect.gen(function*() {
    const sandbox = yield* seeded
    const work = yield* tempDir
    const key = Path.join(work, "redaction.key")
    const out = Path.join(work, "redacted-csv")
    const result = yield* exportTo(sandbox, out, { redact: yield* redactorWith(key, Path.join(work, "any")) })
    return { key, out, result }
  }).pipe(Effect.provide(NodeContext.layer))
)

describe("export --redact", () => {
  it.live(
    "no original personal value survives in any file; fakes are consistent, keyed and keep their form",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* seeded
        const work = yield* tempDir
        const plain = Path.join(work, "plain")
        yield* exportTo(sandbox, plain)
        const originals = personalValues(plain)
        // The seeded account's people, companies, e-mails, phones and CNPJ are among them.
        for (const v of ["Ana Souza", "Carlos Lima", "ana@example.com.br", "+55 11 98888-7777", "11222333000181"]) {
          assert.isTrue(originals.has(v), v)
        }
        const csv = yield* redactedCsv
        const key = csv.key
        assert.strictEqual(statSync(key).mode & 0o777, 0o600)

        for (const format of ["csv", "xlsx"] as const) {
          const xlsx = Path.join(work, "redacted-xlsx")
          const { out, result } = format === "csv" ? csv : {
            out: xlsx,
            result: yield* exportTo(sandbox, xlsx, { redact: yield* redactorWith(key, xlsx) }, format)
          }
          const text = yield* exportText(out)
          const survivors = [...originals].filter(([, forms]) => forms.some((form) => text.includes(form)))
            .map(([v]) => v)
          assert.deepStrictEqual(survivors, [], format)
          assert.notInclude(text, readFileSync(key, "utf8").trim())
          assert.strictEqual(result.manifest.redaction?.method, "hmac-sha256")
          assert.deepInclude(result.manifest.redaction!.fields, {
            resource: "customers",
            field: "cpfCnpj",
            fake: "cpfCnpj"
          })
          assert.isTrue((yield* runVerify(out)).ok, format)
        }

        const out = csv.out
        const users = readCsv(Path.join(out, "users.csv")).rows
        const customers = readCsv(Path.join(out, "customers.csv")).rows
        const teamUsers = readCsv(Path.join(out, "team-users.csv")).rows
        // Keys and ids untouched; the same name has the same fake in users.csv and team-users.csv.
        assert.deepStrictEqual(users.map((u) => `${u.id}:${u.externalId}:${u.login}`), [
          "1:USR-001:ana.souza",
          "2:USR-002:bruno.almeida"
        ])
        assert.deepStrictEqual(teamUsers.map((u) => u.name), users.map((u) => u.name))
        assert.match(users[0]!.email!, /^[\w.]+@example\.com$/)
        const padaria = customers.find((c) => c.externalId === "CLI-0001")!
        assert.notInstanceOf(parseCpfCnpj(padaria.cpfCnpj!), Invalid)
        const phones = padaria.phoneNumber!.split("|").map((p) => p.replace(/^'/, ""))
        assert.deepStrictEqual(phones.map((p) => p.replace(/\d/g, "9")), ["+99 99 9999-9999", "+99 99 99999-9999"])
        assert.isTrue(phones.every((p) => p.startsWith("+55 ")))
        const contact = JSON.parse(padaria.contacts!)[0]
        assert.strictEqual(contact.jobPosition, "Gerente")
        // Carlos Lima is the contact and the ticket's requester: one fake for both, as for his e-mail.
        const ticket = readCsv(Path.join(out, "tickets.csv")).rows[0]!
        assert.strictEqual(ticket.requesterEmail, contact.email)

        // The same key gives the same fakes in a later export; another key, other ones (users.csv is what is compared:
        // only it is exported again).
        const again = Path.join(work, "again")
        yield* exportTo(sandbox, again, { redact: yield* redactorWith(key, again), resources: ["users"] })
        assert.strictEqual(
          readFileSync(Path.join(again, "users.csv"), "utf8"),
          readFileSync(Path.join(out, "users.csv"), "utf8")
        )
        const other = Path.join(work, "other")
        yield* exportTo(sandbox, other, {
          redact: yield* redactorWith(Path.join(work, "other.key"), other),
          resources: ["users"]
        })
        assert.notStrictEqual(readCsv(Path.join(other, "users.csv")).rows[0]!.name, users[0]!.name)
      }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
    180_000
  )

  it.live("CPF/CNPJ fakes are valid and keep punctuation, length and leading zeros", () =>
    Effect.gen(function*() {
      const work = yield* tempDir
      const redactor = yield* redactorWith(Path.join(work, "k"), Path.join(work, "out"), "customers.cpfCnpj")
      const given = ["012.345.678-90", "11.222.333/0001-81", "00123456797", "04252011000110", "529.982.247-25"]
      const faked = redactor.records(resource("customers"), given.map((cpfCnpj) => ({ cpfCnpj })))
        .map((r) => r.cpfCnpj as string)
      faked.forEach((fake, i) => {
        assert.strictEqual(fake.replace(/\d/g, "9"), given[i]!.replace(/\d/g, "9"), fake)
        assert.notStrictEqual(fake, given[i])
        assert.notInstanceOf(parseCpfCnpj(fake), Invalid, fake)
      })
      // Punctuated or not, one CPF has one fake.
      const [a, b] = redactor.records(resource("customers"), [{ cpfCnpj: "529.982.247-25" }, {
        cpfCnpj: "52998224725"
      }])
      assert.strictEqual(String(a!.cpfCnpj).replace(/\D/g, ""), b!.cpfCnpj)
    }).pipe(Effect.scoped), 60_000)

  it.live("an interrupted export continues only with the same --redact and key", () =>
    Effect.gen(function*() {
      const work = yield* tempDir
      const one = yield* redactorWith(Path.join(work, "one.key"), Path.join(work, "out"))
      const two = yield* redactorWith(Path.join(work, "two.key"), Path.join(work, "out"))
      const run = {
        baseUrl: "http://127.0.0.1:1/v2",
        format: "csv" as const,
        since: "2000-01-01",
        until: "2028-01-01",
        resources: ["users"]
      }
      const saved = { tool: "fsm-bulk" as const, ...run, redaction: one.manifest, started: "", done: [] }
      yield* sameRun(saved, { ...run, redaction: one.manifest }, "out")
      for (const now of [{ ...run, redaction: two.manifest }, run]) {
        const refused = yield* Effect.flip(sameRun(saved, now, "out"))
        assert.match(refused.message, /another --redact \(other fields, another --redact-key, or none\)/)
      }
    }).pipe(Effect.scoped), 60_000)

  it.live("no key, id or reference is redacted; a key named by hand is refused", () =>
    Effect.gen(function*() {
      const plan = yield* planRedaction("pii")
      for (const [name, planned] of plan.fields) {
        const r = resource(name)
        for (const { field } of planned) {
          assert.notStrictEqual(field.name, r.key, `${name}.${field.name}`)
          assert.isUndefined(field.ref, `${name}.${field.name}`)
        }
      }
      const refused = yield* Effect.flip(planRedaction("users.login,customers.email"))
      assert.match(refused.message, /users\.login cannot be redacted: it is a key/)
      assert.match((yield* Effect.flip(planRedaction("clientes.email"))).message, /"clientes\.email" is not pii/)
    }), 60_000)

  it.live(
    "a redacted export imports into an empty sandbox, and seeds one that exports it again byte for byte",
    () =>
      Effect.gen(function*() {
        const work = yield* tempDir
        const { out } = yield* redactedCsv

        const empty = yield* startTestSandbox()
        for (const name of ["segments", "customer-groups", "users", "teams", "customers"] as const) {
          assert.isTrue(importable.some((r) => r.name === name))
          const runDir = Path.join(work, `import-${name}`)
          yield* importInto(empty, { resource: name, file: Path.join(out, `${name}.csv`), runDir }, accountA.apiKey)
          assert.deepStrictEqual([...new Set(readReport(runDir).map((r) => r._status))], ["created"], name)
        }
        const stored = yield* empty.control.records(accountA.apiKey, "customers")
        const redactedCustomers = readCsv(Path.join(out, "customers.csv")).rows
        assert.deepStrictEqual(stored.map((c) => c.cpfCnpj), redactedCustomers.map((c) => c.cpfCnpj))

        const copy = yield* startTestSandbox({ copy: yield* readExportCopy(out) })
        const again = Path.join(work, "again")
        yield* exportTo(copy, again)
        for (const file of readdirSync(out).filter((f) => f !== "manifest.json")) {
          assert.strictEqual(
            readFileSync(Path.join(again, file), "utf8"),
            readFileSync(Path.join(out, file), "utf8"),
            file
          )
        }
      }).pipe(Effect.scoped, Effect.provide(NodeContext.layer)),
    180_000
  )
})
