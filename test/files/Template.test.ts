import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { columnLetter } from "../../src/files/Header.js"
import { openZip } from "../../src/files/Zip.js"
import { importable, resource, templateColumns } from "../../src/Resources.js"
import { writeTemplates } from "../../src/template/Generate.js"
import { describeResource } from "../../src/validate/Describe.js"
import { readAll, root, tempDir } from "./support.js"

const committed = Path.join(root, "templates")

/** Every entry of a ZIP archive, decompressed: what an .xlsx holds apart from the archive's own timestamps. */
const unzipAll = (path: string) =>
  Effect.promise(async () => {
    const zip = await openZip(path)
    try {
      const parts = new Map<string, string>()
      for (const name of [...zip.entries.keys()].sort()) {
        if (!name.endsWith("/")) parts.set(name, (await zip.read(name))!.toString("utf8"))
      }
      return parts
    } finally {
      await zip.close()
    }
  })

/** The fill colour of a cell, from the sheet's style index and styles.xml. */
const fillOf = (parts: ReadonlyMap<string, string>, sheet: string, ref: string): string | undefined => {
  const style = new RegExp(`<c r="${ref}"(?: s="(\\d+)")?`).exec(parts.get(sheet)!)?.[1]
  const styles = parts.get("xl/styles.xml")!
  const xfs = [...(/<cellXfs[^>]*>([\s\S]*?)<\/cellXfs>/.exec(styles)?.[1] ?? "").matchAll(/<xf\b[^>]*>/g)].map((m) =>
    /fillId="(\d+)"/.exec(m[0])?.[1]
  )
  const fills = [...(/<fills[^>]*>([\s\S]*?)<\/fills>/.exec(styles)?.[1] ?? "").matchAll(/<fill>([\s\S]*?)<\/fill>/g)]
    .map((m) => /fgColor rgb="(\w+)"/.exec(m[1]!)?.[1])
  const fillId = style === undefined ? undefined : xfs[Number(style)]
  return fillId === undefined ? undefined : fills[Number(fillId)]
}

describe("templates", () => {
  it.scoped("templates/ matches the resource table (regenerate with `fsm-bulk template` when this fails)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const written = yield* writeTemplates({ resources: importable, formats: ["csv", "xlsx"], out: dir })
      const expected = written.map((p) => Path.basename(p.path)).sort()
      // The example onboarding workbook sits beside the templates; its own test (test/onboard) keeps it in step.
      const present = readdirSync(committed)
        .filter((f) => /\.(csv|xlsx|md)$/.test(f) && f !== "example-onboarding.xlsx")
        .sort()
      assert.deepStrictEqual(present, expected, "templates/ holds a different set of files than the table produces")
      for (const name of expected) {
        const fresh = Path.join(dir, name)
        const kept = Path.join(committed, name)
        if (name.endsWith(".xlsx")) {
          const [a, b] = [yield* unzipAll(fresh), yield* unzipAll(kept)]
          assert.deepStrictEqual([...b.keys()], [...a.keys()], `${name}: different parts`)
          for (const [part, content] of a) {
            assert.strictEqual(b.get(part), content, `templates/${name} is out of date (${part})`)
          }
        } else {assert.strictEqual(
            readFileSync(kept, "utf8"),
            readFileSync(fresh, "utf8"),
            `templates/${name} is out of date`
          )}
      }
    }))

  it.scoped("a CSV template is the header and one example row, read back as the resource's columns", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTemplates({ resources: [resource("tasks")], formats: ["csv"], out: dir })
      const file = Path.join(dir, "tasks.csv")
      assert.isTrue(readFileSync(file, "utf8").startsWith("\uFEFFid,externalId,idUserFrom,userFromLogin,"))
      const { rows, source } = yield* readAll(file)
      assert.deepStrictEqual(source.header, templateColumns(resource("tasks")).map((c) => c.name))
      assert.strictEqual(source.writtenByTool, false)
      assert.strictEqual(rows.length, 1)
      const cell = (name: string) => rows[0]!.cells[source.header.indexOf(name)]
      assert.strictEqual(cell("externalId"), "OS-2026-0001")
      assert.strictEqual(cell("userFromLogin"), "ana.souza")
      assert.strictEqual(cell("idUserFrom"), "")
      assert.strictEqual(cell("customerExternalId"), "CLI-0001")
      assert.strictEqual(cell("taskDate"), "2026-12-01T09:00:00")
    }))

  it.scoped("an XLSX template has notes, drop-downs, marked required columns, a frozen header and a README", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      yield* writeTemplates({ resources: [resource("tasks"), resource("customers")], formats: ["xlsx"], out: dir })
      const file = Path.join(dir, "tasks.xlsx")
      const { rows, source } = yield* readAll(file, { resource: "tasks" })
      const columns = templateColumns(resource("tasks")).map((c) => c.name)
      assert.strictEqual(source.sheet, "tasks")
      assert.deepStrictEqual(source.header, columns)
      assert.strictEqual(source.writtenByTool, false)
      assert.strictEqual(rows.length, 1)
      // An enumeration's example shows the name its drop-down offers.
      assert.strictEqual(rows[0]!.cells[columns.indexOf("priority")], "medium")
      assert.strictEqual(rows[0]!.cells[columns.indexOf("keyWordsDescription")], "Urgente")

      const parts = yield* unzipAll(file)
      const workbook = parts.get("xl/workbook.xml")!
      assert.match(workbook, /<sheet sheetId="1" name="tasks"/)
      assert.match(workbook, /<sheet sheetId="2" name="README"/)
      const sheet = parts.get("xl/worksheets/sheet1.xml")!
      assert.match(sheet, /<pane ySplit="1"[^>]*state="frozen"/)
      const letter = (name: string) => columnLetter(columns.indexOf(name))
      assert.include(
        sheet,
        `<dataValidation type="list" allowBlank="1" showInputMessage="1" promptTitle="priority" prompt="1 = low, 2 = medium, 3 = high"`
      )
      assert.match(
        sheet,
        new RegExp(
          `<dataValidation type="list"[^>]*sqref="${letter("priority")}2:${
            letter("priority")
          }10001"><formula1>&quot;low,medium,high&quot;</formula1>`
        )
      )
      assert.match(
        sheet,
        new RegExp(
          `sqref="${letter("sendSatisfactionSurvey")}2:${
            letter("sendSatisfactionSurvey")
          }10001"><formula1>&quot;true,false&quot;</formula1>`
        )
      )
      const notes = parts.get("xl/comments1.xml")!
      for (const [i, name] of columns.entries()) assert.include(notes, `<comment ref="${columnLetter(i)}1"`, name)
      assert.include(notes, "Values: 1 = low, 2 = medium, 3 = high")
      assert.include(notes, "names the user record by its login; fill either this or idUserFrom")
      assert.include(notes, "Required when a record is created")
      assert.strictEqual(fillOf(parts, "xl/worksheets/sheet1.xml", `${letter("taskDate")}1`), "FFF8CBAD")
      assert.strictEqual(fillOf(parts, "xl/worksheets/sheet1.xml", `${letter("userFromLogin")}1`), "FFFCE4D6")
      assert.strictEqual(fillOf(parts, "xl/worksheets/sheet1.xml", `${letter("orientation")}1`), "FFD9E1F2")
      const readme = yield* readAll(file, { sheet: "README" })
      assert.deepStrictEqual(readme.source.header, ["Tasks (tasks)"])
      const table = readme.rows.map((r) => r.cells.join("\t")).join("\n")
      for (const doc of describeResource(resource("tasks"))) assert.include(table, doc.name)

      const customers = yield* unzipAll(Path.join(dir, "customers.xlsx"))
      assert.include(
        customers.get("xl/comments1.xml")!,
        "a JSON list of objects with the keys name, jobPosition, email, phone"
      )
    }))
})
