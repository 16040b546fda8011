/**
 * report.html and report.xlsx's Summary sheet in the language of the run: `--lang pt-BR` (or `LANG=pt_BR…`) writes
 * their headings and labels in Portuguese, while statuses, `data-figure` names and the report's columns stay
 * English; `fsm-bulk report RUN_DIR` redraws the page in the language it is run in (`--lang`, else the environment).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { cp1252, put, readReport, runCli, tempDir } from "../import/support.js"

const clientes = cp1252(
  [
    "Código;Nome;E-mail",
    "CLI-1;Padaria São João;contato@padaria.com.br",
    "CLI-2;;financeiro@mercado"
  ].join("\r\n") + "\r\n"
)

const headingsOf = (html: string) => [...html.matchAll(/<h2>([^<]*)<\/h2>/g)].map((m) => m[1])

/** Column A of report.xlsx's Summary sheet, as text. */
const summaryLabels = (runDir: string) =>
  Effect.promise(async () => {
    const book = new ExcelJS.Workbook()
    await book.xlsx.readFile(Path.join(runDir, "report.xlsx"))
    const sheet = book.getWorksheet("Summary")!
    const labels: Array<string> = []
    sheet.eachRow((row) => labels.push(String(row.getCell(1).value ?? "")))
    const values: Array<string> = []
    sheet.eachRow((row) => values.push(String(row.getCell(2).value ?? "")))
    return { labels, values }
  })

describe("reports in Portuguese", () => {
  it.scopedLive("validate --lang pt-BR: report.html and the Summary sheet in Portuguese; statuses stay English", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", clientes)
      const run = Path.join(dir, "run")
      const out = yield* runCli(["validate", "clientes", file, "--lang", "pt-BR", "--out", run], undefined, dir)
      assert.strictEqual(out.code, 1, out.stderr)

      const html = Fs.readFileSync(Path.join(run, "report.html"), "utf8")
      assert.include(html, `<html lang="pt-BR">`)
      assert.includeMembers(headingsOf(html), ["Execução", "Linhas por status", "Erros por tipo"])
      assert.notInclude(html, "Rows by status")
      assert.include(html, "saída 1: ao menos uma linha não terminou bem")
      assert.include(html, "<td>comando</td>")
      assert.include(html, "<th>linhas</th><th>erro (sem os valores)</th><th>exemplos</th>")
      assert.include(html, "linha 3: Nome: obrigatório")
      // What scripts read stays: statuses and figure names.
      assert.include(html, `data-figure="count:invalid"`)
      assert.match(html, />invalid</)

      const { labels, values } = yield* summaryLabels(run)
      assert.includeMembers(labels, [
        "Linhas por status",
        "total de linhas",
        "Erros por tipo",
        "Configurações",
        "comando",
        "simulação",
        "pasta da execução",
        "Execução",
        "código de saída"
      ])
      assert.includeMembers(labels, ["invalid", "valid"])
      assert.notInclude(labels, "Rows by status")
      assert.include(values, "não")
      // report.csv's columns and statuses stay English.
      assert.deepStrictEqual(readReport(run).map((r) => r._status), ["valid", "invalid"])
    }))

  it.scopedLive("English by default; `report RUN_DIR` redraws in the language it is run in (--lang, then LANG)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", clientes)
      const run = Path.join(dir, "run")
      const out = yield* runCli(["validate", "clientes", file, "--out", run], undefined, dir, { LANG: "C" })
      assert.strictEqual(out.code, 1, out.stderr)
      const page = () => Fs.readFileSync(Path.join(run, "report.html"), "utf8")
      assert.include(page(), `<html lang="en">`)
      assert.includeMembers(headingsOf(page()), ["Run", "Rows by status", "Errors by kind"])
      assert.includeMembers((yield* summaryLabels(run)).labels, ["Rows by status", "Settings", "exit code"])

      const redrawn = yield* runCli(["report", run, "--lang", "pt-BR"], undefined, dir, { LANG: "C" })
      assert.strictEqual(redrawn.code, 0, redrawn.stderr)
      assert.includeMembers(headingsOf(page()), ["Execução", "Linhas por status", "Erros por tipo"])

      const fromEnv = yield* runCli(["report", run], undefined, dir, { LANG: "en_US.UTF-8" })
      assert.strictEqual(fromEnv.code, 0, fromEnv.stderr)
      assert.includeMembers(headingsOf(page()), ["Run", "Rows by status"])
    }))
})
