/**
 * A Brazilian implementer's files through the built CLI: Windows-1252, `;`, Portuguese headers and resource names,
 * dd/mm/yyyy dates and decimal commas. With `--lang pt-BR` (or `LANG=pt_BR.UTF-8`) the row errors, the closing lines
 * and the `next:` line are in Portuguese and still name the file, the row and the column; the machine columns
 * (`_status`) and summary.json stay English. Without either, the output is English as before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import * as Path from "node:path"
import { cp1252, put, readReport, runCli, tempDir } from "../import/support.js"
import { lastJson } from "../support.js"

const tarefas = cp1252(
  [
    "Código;userFromLogin;Código do cliente;Data da tarefa;Prioridade",
    "T-1;ana;CLI-1;31/02/2026;alta",
    "T-2;ana;CLI-1;25/12/2026 09:30;média"
  ].join("\r\n") + "\r\n"
)

const clientes = cp1252(
  [
    "Código;Nome;E-mail;CPF/CNPJ;Latitude",
    "CLI-1;Padaria São João;contato@padaria.com.br;111.444.777-35;-23,5614",
    "CLI-2;Mercado Bom Preço;financeiro@mercado;111.444.777-36;-23,5700",
    "CLI-3;;loja@exemplo.com.br;11.222.333/0001-81;-23,5800"
  ].join("\r\n") + "\r\n"
)

describe("in Portuguese", () => {
  it.scopedLive("validate --lang pt-BR: Portuguese row errors naming file, row and column; statuses stay English", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "tarefas.csv", tarefas)
      const run = Path.join(dir, "run")
      const out = yield* runCli(["validate", "tarefas", file, "--lang", "pt-BR", "--out", run], undefined, dir)
      assert.strictEqual(out.code, 1, out.stderr)
      assert.include(out.stderr, "validate tasks: 2 linhas em")
      assert.include(out.stderr, "o que deu errado, do mais frequente ao menos:")
      assert.include(out.stderr, `linha 2: Data da tarefa: "31/02/2026" não é uma data que existe`)
      assert.include(out.stderr, `próximo passo: corrija as linhas indicadas acima em ${file} e valide de novo`)
      assert.include(out.stderr, `pasta da execução: ${run}`)
      assert.notInclude(out.stderr, "what went wrong")
      const report = readReport(run)
      assert.deepStrictEqual(report.map((r) => r._status), ["invalid", "valid"])
      assert.strictEqual(report[0]!._error, `Data da tarefa: "31/02/2026" não é uma data que existe`)
      // The source columns come back as the user wrote them.
      assert.strictEqual(report[1]!["Código do cliente"], "CLI-1")
    }))

  it.scopedLive("LANG=pt_BR.UTF-8 chooses Portuguese; CPF check digits, e-mail, required name; --json keys stay", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", clientes)
      const run = Path.join(dir, "run")
      const out = yield* runCli(["validate", "clientes", file, "--out", run], undefined, dir, {
        LANG: "pt_BR.UTF-8"
      })
      assert.strictEqual(out.code, 1, out.stderr)
      const report = readReport(run)
      assert.deepStrictEqual(report.map((r) => r._status), ["valid", "invalid", "invalid"])
      assert.include(report[1]!._error, `E-mail: "financeiro@mercado" não é um endereço de e-mail`)
      assert.include(report[1]!._error, `CPF/CNPJ: "111.444.777-36" tem dígitos verificadores errados`)
      assert.strictEqual(report[2]!._error, "Nome: obrigatório")
      assert.include(out.stderr, "linha 3: ")

      const json = yield* runCli(
        ["validate", "clientes", file, "--json", "--out", Path.join(dir, "j")],
        undefined,
        dir,
        {
          LANG: "pt_BR.UTF-8"
        }
      )
      const summary = lastJson(json.stdout)
      assert.strictEqual(summary.counts.invalid, 2)
      assert.strictEqual(summary.resource, "customers")
    }))

  it.scopedLive("a header missing a required column: the file-level error in Portuguese, exit 2", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", cp1252("Código;E-mail\r\nCLI-1;a@b.com.br\r\n"))
      const out = yield* runCli(["validate", "clientes", file, "--lang=pt-BR"], undefined, dir)
      assert.strictEqual(out.code, 2)
      assert.include(out.stderr, `(coluna "name"): falta a coluna obrigatória para upsert: name`)
    }))

  it.scopedLive("without --lang, or with LC_ALL=C over LANG=pt_BR, the output is English; --lang fr is refused", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", clientes)
      for (const env of [{}, { LANG: "pt_BR.UTF-8", LC_ALL: "C" }]) {
        const run = Path.join(dir, `run-${Object.keys(env).length}`)
        const out = yield* runCli(["validate", "customers", file, "--out", run], undefined, dir, env)
        assert.strictEqual(out.code, 1, out.stderr)
        assert.include(out.stderr, "what went wrong, most rows first:")
        assert.include(out.stderr, `next: correct the rows named above in ${file} and validate it again`)
        assert.include(readReport(run)[1]!._error, `CPF/CNPJ: "111.444.777-36" has wrong check digits`)
      }
      const wrong = yield* runCli(["validate", "customers", file, "--lang", "fr"], undefined, dir)
      assert.strictEqual(wrong.code, 2)
      assert.include(wrong.stderr, "--lang fr: not a language of fsm-bulk; use en or pt-BR")
    }))

  it.scopedLive("template clientes --lang pt-BR: notes, README sheet and the workbook's README in Portuguese", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const noteOf = (sheet: ExcelJS.Worksheet, column: string) => {
        const header = (sheet.getRow(1).values as Array<unknown>).map((v) => String(v ?? ""))
        const note = sheet.getCell(1, header.indexOf(column)).note
        return typeof note === "string" ? note : (note?.texts ?? []).map((x) => x.text).join("")
      }
      const read = (file: string) =>
        Effect.promise(async () => {
          const workbook = new ExcelJS.Workbook()
          await workbook.xlsx.readFile(file)
          return workbook
        })
      for (
        const [lang, words] of [["pt-BR", ["Obrigatório ao criar um registro", "Tipo: texto", "Exemplo: "]], [
          "en",
          ["Required when a record is created", "Type: text", "Example: "]
        ]] as const
      ) {
        const out = Path.join(dir, lang)
        const made = yield* runCli(
          ["template", "clientes", "--format", "xlsx", "--lang", lang, "--out", out],
          undefined,
          dir
        )
        assert.strictEqual(made.code, 0, made.stderr)
        const workbook = yield* read(Path.join(out, "customers.xlsx"))
        const note = noteOf(workbook.getWorksheet("customers")!, "name")
        for (const w of words) assert.include(note, w)
        const readme = workbook.getWorksheet("README")!
        const texts = readme.getColumn(1).values.map((v) => String(v ?? ""))
        assert.include(
          texts.join("\n"),
          lang === "pt-BR" ? `Preencha a planilha "customers"` : `Fill the "customers" sheet`
        )
      }
      const cpf = noteOf((yield* read(Path.join(dir, "pt-BR", "customers.xlsx"))).getWorksheet("customers")!, "cpfCnpj")
      assert.include(cpf, "CPF (11 dígitos) ou CNPJ (14 dígitos)")

      const book = Path.join(dir, "implantacao.xlsx")
      const made = yield* runCli(["template", "--workbook", "--out", book], undefined, dir, { LANG: "pt_BR.UTF-8" })
      assert.strictEqual(made.code, 0, made.stderr)
      const readme = (yield* read(book)).getWorksheet("README")!
      assert.strictEqual(String(readme.getCell("A1").value), "Pasta de trabalho de implantação")
      assert.include(String(readme.getCell("A11").value), "Veja o plano sem gravar nada: fsm-bulk onboard")
    }))
})
