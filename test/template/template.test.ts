/**
 * The XLSX templates as a user fills them: drop-downs that let through every spelling the importer reads and
 * cover a bounded range, the example row reported when it is left in, and regeneration that leaves unchanged
 * files alone (bytes and time stamps).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readFileSync, statSync, utimesSync } from "node:fs"
import * as Path from "node:path"
import { openZip } from "../../src/files/Zip.js"
import { runValidate } from "../../src/import/ValidateRun.js"
import { resource } from "../../src/Resources.js"
import { writeTemplates } from "../../src/template/Generate.js"
import { validatedRows } from "../../src/template/Xlsx.js"
import { readReport } from "../import/support.js"
import { temporaryDir } from "../support.js"

const tempDir = temporaryDir("fsm-template-")

const validate = (resourceName: "tasks" | "customers" | "users", file: string, runDir: string) =>
  runValidate({
    resource: resourceName,
    file,
    runDir,
    read: { encoding: "auto", delimiter: "auto" },
    dateFormat: "auto",
    decimal: "auto",
    mode: "upsert"
  })

const sheetXml = (file: string, part: string) =>
  Effect.promise(async () => {
    const zip = await openZip(file)
    try {
      return (await zip.read(part))!.toString("utf8")
    } finally {
      zip.close()
    }
  })

describe("XLSX template drop-downs", () => {
  it.scoped("cover a bounded range, show names, and let through every spelling the importer reads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTemplates({ resources: [resource("tasks")], formats: ["xlsx"], out: dir })
      const file = Path.join(dir, "tasks.xlsx")
      const xml = yield* sheetXml(file, "xl/worksheets/sheet1.xml")
      const validations = [...xml.matchAll(/<dataValidation\b[^>]*>/g)].map((m) => m[0])
      assert.isAbove(validations.length, 0)
      for (const v of validations) {
        const [, last] = /sqref="[A-Z]+2:[A-Z]+(\d+)"/.exec(v) ?? []
        assert.strictEqual(Number(last), validatedRows + 1, `a bounded range: ${v}`)
        // Excel informs about an unlisted value but takes it: `sim` or `alta` typed in the cell stays.
        if (v.includes("type=\"list\"")) assert.include(v, "errorStyle=\"information\"")
      }
      assert.notInclude(xml, "1048576")

      // Filled as a Brazilian user would: the example row left in row 2, then rows in Portuguese.
      const workbook = new ExcelJS.Workbook()
      yield* Effect.promise(() => workbook.xlsx.readFile(file))
      const sheet = workbook.getWorksheet("tasks")!
      const header = (sheet.getRow(1).values as Array<unknown>).map((v) => String(v ?? ""))
      const row = (n: number, cells: Record<string, string>) => {
        for (const [name, value] of Object.entries(cells)) sheet.getRow(n).getCell(header.indexOf(name)).value = value
      }
      const task = {
        externalId: "OS-9",
        userFromLogin: "ana",
        userToLogin: "bia",
        customerExternalId: "C-1",
        taskDate: "2026-12-01T09:00:00"
      }
      row(3, { ...task, priority: "alta", sendSatisfactionSurvey: "sim" })
      row(4, { ...task, externalId: "OS-10", priority: "média", sendSatisfactionSurvey: "não" })
      row(5, { ...task, externalId: "OS-11", priority: "baixa", sendSatisfactionSurvey: "x" })
      const filled = Path.join(dir, "filled.xlsx")
      yield* Effect.promise(() => workbook.xlsx.writeFile(filled))

      const result = yield* validate("tasks", filled, Path.join(dir, "run"))
      const report = readReport(result.runDir)
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), [
        "2:invalid",
        "3:valid",
        "4:valid",
        "5:valid"
      ])
      assert.include(report[0]!._error, "this is the template's example row; delete it")
      assert.strictEqual(result.exitCode, 1)
    }))

  it.scoped("the example row of a CSV template is reported, and a file without it passes", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTemplates({ resources: [resource("customers")], formats: ["csv"], out: dir })
      const template = readFileSync(Path.join(dir, "customers.csv"), "utf8")
      const result = yield* validate("customers", Path.join(dir, "customers.csv"), Path.join(dir, "left"))
      const report = readReport(result.runDir)
      assert.deepStrictEqual(report.map((r) => r._status), ["invalid"])
      assert.match(report[0]!._error, /^externalId: this is the template's example row; delete it/)

      // One cell of the user's own and the row is theirs.
      const [head, example] = template.split("\r\n")
      const own = Path.join(dir, "own.csv")
      yield* Effect.promise(async () => {
        const { writeFile } = await import("node:fs/promises")
        await writeFile(own, `${head}\r\n${example!.replace("CLI-0001", "CLI-7777")}\r\n`)
      })
      const mine = yield* validate("customers", own, Path.join(dir, "own"))
      assert.deepStrictEqual(readReport(mine.runDir).map((r) => r._status), ["valid"])
    }))
})

describe("regenerating templates", () => {
  it.scoped("leaves files whose bytes would not change alone, and says so", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const request = {
        resources: [resource("customers"), resource("users")],
        formats: ["csv", "xlsx"] as const,
        out: dir
      }
      const first = yield* writeTemplates(request)
      assert.isTrue(first.every((f) => f.state === "written"))
      const old = new Date("2020-01-01T00:00:00Z")
      const before = first.map((f) => {
        utimesSync(f.path, old, old)
        return readFileSync(f.path)
      })
      const second = yield* writeTemplates(request)
      assert.deepStrictEqual(second.map((f) => f.state), first.map(() => "unchanged"))
      second.forEach((f, i) => {
        assert.isTrue(readFileSync(f.path).equals(before[i]!), `${f.path}: same bytes`)
        assert.strictEqual(statSync(f.path).mtimeMs, old.getTime(), `${f.path}: not rewritten`)
      })
    }))

  it("the committed templates are what the generator writes, byte for byte", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const dir = yield* tempDir
          const root = Path.resolve(import.meta.dirname, "../../templates")
          const written = yield* writeTemplates({
            resources: [resource("tasks"), resource("customers")],
            formats: ["csv", "xlsx"],
            out: dir
          })
          for (const f of written.filter((w) => !w.path.endsWith("README.md"))) {
            const committed = readFileSync(Path.join(root, Path.basename(f.path)))
            assert.isTrue(readFileSync(f.path).equals(committed), `templates/${Path.basename(f.path)} differs`)
          }
        })
      )
    ))
})
