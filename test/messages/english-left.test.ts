/**
 * Round 2 of the Portuguese: what `--lang pt-BR` still left in English (the budget chart's captions, a run stopped by
 * a file it could not write, the header's refusals and warnings, hidden rows, cells beyond the header or holding an
 * error value, attachments, the templates' field descriptions), numbers and dates of report.html written the
 * Brazilian way, and a check that fails when a user-facing English sentence is added as a literal to the modules
 * that print, report or validate instead of going through the catalogue (src/Messages.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"
import { stopAfterSending } from "../../src/console/Output.js"
import { hasPortuguese } from "../../src/FieldDocs.js"
import { WriteError } from "../../src/files/Write.js"
import { setLanguage } from "../../src/Messages.js"
import { writeRunReport } from "../../src/report/Html.js"
import { importable, resource, templateColumns } from "../../src/Resources.js"
import { describeResource } from "../../src/validate/Describe.js"
import { planColumns } from "../../src/validate/Validate.js"
import {
  cp1252,
  importInto,
  put,
  readReport,
  root,
  startTestSandbox,
  tempDir,
  validateFile
} from "../import/support.js"
import { options } from "../validate/support.js"

/** Runs `body` with the messages in `language`, and back to English after it, however it ends. */
const inLanguage = <A, E, R>(language: "en" | "pt-BR", body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => setLanguage(language)),
    () => body,
    () => Effect.sync(() => setLanguage("en"))
  )

/** Words of an English sentence that Portuguese text does not contain. */
const englishWords = /\b(the|of|is|are|was|were|not|and|with|per|its|their|by|from|has|have|cannot|each|every)\b/i

/** The text a reader sees on a page: no tags, no style, no entities. */
const visibleText = (html: string): string =>
  html.replace(/<style>[\s\S]*?<\/style>/g, " ").replace(/<code>[^<]*<\/code>/g, " ").replace(/<[^>]+>/g, "\n")
    .replace(/&[a-z#0-9]+;/g, " ")

describe("English left under --lang pt-BR", () => {
  it.scopedLive("the header's refusals and warnings, in Portuguese", () =>
    inLanguage(
      "pt-BR",
      Effect.gen(function*() {
        const customers = resource("customers")
        // A hidden column is named and not sent.
        const hidden = yield* planColumns(customers, "clientes.xlsx", ["externalId", "name", "note"], {
          ...options(),
          hiddenColumns: [2]
        })
        assert.deepStrictEqual(hidden.warnings, [
          `clientes.xlsx: a coluna "note" está oculta na planilha; ignorada, seus valores não são enviados (reexiba-a ou use --include-hidden)`
        ])
        // update without a column to find the records by.
        const noKey = yield* Effect.either(
          planColumns(customers, "clientes.csv", ["name"], options({ mode: "update" }))
        )
        assert.isTrue(Either.isLeft(noKey))
        const detail = Either.isLeft(noKey) ? noKey.left.detail : ""
        assert.include(detail, `update precisa de uma coluna para achar cada registro: "id" ou "externalId"`)
        assert.notMatch(detail, englishWords)
        // A key column spelt almost right.
        const near = yield* Effect.either(
          planColumns(customers, "clientes.csv", ["externalld", "name"], options({ mode: "upsert" }))
        )
        const nearDetail = Either.isLeft(near) ? near.left.detail : ""
        assert.include(nearDetail, `"externalld" não é uma coluna de customers: quis dizer "externalId"?`)
        assert.notMatch(nearDetail, englishWords)
        // Two columns for one field.
        const twice = yield* Effect.either(planColumns(customers, "clientes.csv", ["name", "Nome"], options()))
        assert.strictEqual(
          Either.isLeft(twice) ? twice.left.detail : "",
          `as colunas "name" e "Nome" dão ambas name; mantenha só uma`
        )
      })
    ))

  it.scopedLive("cells beyond the header, error values and the template's example row, in Portuguese", () =>
    inLanguage(
      "pt-BR",
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = put(
          dir,
          "clientes.csv",
          cp1252(
            ["externalId;name;note", "C-1;Padaria;ok;SP;extra", "C-2;#N/A;", "C-3;Mercado São Jorge;"].join("\r\n")
          )
        )
        const runDir = Path.join(dir, "run")
        yield* validateFile({ resource: "customers", file, runDir })
        const rows = readReport(runDir)
        const errorOf = (row: string) => rows.find((r) => r._row === row)!._error!
        assert.strictEqual(
          errorOf("2"),
          `(além da última coluna): 2 valores além das 3 colunas do cabeçalho ("SP", "extra"); um valor pode conter um delimitador sem aspas`
        )
        assert.strictEqual(
          errorOf("3"),
          "name: o valor de erro #N/A, não um dado (uma planilha salvou o erro como texto): corrija a célula na planilha"
        )
        assert.strictEqual(rows.find((r) => r._row === "4")!._status, "valid")
      })
    ))

  it.live("a run stopped by a file it could not write says so in Portuguese, with the command that continues it", () =>
    inLanguage(
      "pt-BR",
      Effect.gen(function*() {
        const stopped = yield* Effect.fail(new WriteError({ path: "/x/journal.ndjson", message: "disco cheio" })).pipe(
          stopAfterSending(Effect.succeed(3), () => "fsm-bulk resume runs/x"),
          Effect.flip
        )
        assert.strictEqual(stopped._tag, "RunStopped")
        assert.strictEqual(
          stopped.message,
          "disco cheio; a execução parou depois de 3 requisições: o que foi enviado está no diário, continue com `fsm-bulk resume runs/x` depois de corrigir isso"
        )
      })
    ))

  it.live("templates describe every field and resource in Portuguese", () =>
    inLanguage(
      "pt-BR",
      Effect.sync(() => {
        const missing: Array<string> = []
        for (const r of importable) {
          if (!hasPortuguese(r.title) || !hasPortuguese(r.doc)) missing.push(`${r.name}: its title or doc`)
          setLanguage("en")
          const english = describeResource(r)
          setLanguage("pt-BR")
          const portuguese = describeResource(r)
          english.forEach((column, i) => {
            // A reference's description is "{what}, by {key}": what it names must be translated too.
            const what = column.role === "ref" ? column.description.replace(/, by \w+$/, "") : column.description
            if (!hasPortuguese(what) || portuguese[i]!.description.startsWith(`${what},`)) {
              missing.push(`${r.name}.${column.name}: ${what}`)
            }
          })
        }
        assert.deepStrictEqual(missing, [])
        const name = describeResource(resource("customers")).find((c) => c.name === "name")!
        assert.strictEqual(name.description, "Nome fantasia")
        assert.strictEqual(templateColumns(resource("customers"))[0]!.field.doc, "Server id; leave empty to create")
      })
    ))

  it.scopedLive(
    "report.html writes numbers, durations and moments the Brazilian way in pt-BR, and as before in English",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const file = put(dir, "clientes.csv", "externalId,name\nC-1,Padaria\nC-2,Mercado\n")
        const runDir = Path.join(dir, "run")
        yield* importInto(sandbox, { resource: "customers", file, runDir })
        // Figures large enough for a thousands separator, and a budget window with a decimal.
        const summaryFile = Path.join(runDir, "summary.json")
        const summary = JSON.parse(Fs.readFileSync(summaryFile, "utf8"))
        Fs.writeFileSync(
          summaryFile,
          JSON.stringify({
            ...summary,
            requests: 12345,
            retries: 1500,
            started: "2026-11-27T22:55:01.000Z",
            finished: "2026-11-27T22:57:31.000Z",
            budget: { limit: 2000, windowMs: 2500 }
          })
        )
        const page = () => Fs.readFileSync(Path.join(runDir, "report.html"), "utf8")

        yield* inLanguage("pt-BR", writeRunReport(runDir))
        const pt = page()
        assert.include(pt, `<span data-figure="requests">12.345</span>`)
        assert.include(pt, `<span data-figure="retries">1.500</span>`)
        assert.include(pt, "<td>27/11/2026 22:55:01 UTC</td>")
        assert.include(pt, "<td>27/11/2026 22:57:31 UTC</td>")
        assert.include(pt, "<td>2.000 requisições a cada 2,5 s</td>")
        assert.include(pt, "↑ limite 10.000 a cada 1 s") // the test client's budget, off the chart's scale
        assert.include(pt, "≤ 0,25 s")
        assert.include(pt, "Cada barra: as tentativas de gravação das linhas")
        // Nothing a reader sees is an English sentence (statuses and figures' names are the contract's words).
        const english = visibleText(pt).split("\n").map((l) => l.trim()).filter((l) => englishWords.test(l))
        assert.deepStrictEqual(english, [])

        yield* inLanguage("en", writeRunReport(runDir))
        const en = page()
        assert.include(en, `<span data-figure="requests">12,345</span>`)
        assert.include(en, "<td>2026-11-27T22:55:01.000Z</td>")
        assert.include(en, "<td>2,000 requests per 2.5 s</td>")
        assert.include(en, "↑ budget 10,000 per 1 s")
        assert.include(en, "≤ 0.25 s")
        assert.include(en, "Each bar: the attempts of rows&#39; writes")
      }),
    { timeout: 60_000 }
  )

  it("no user-facing English sentence is written as a literal where the catalogue should hold it", () => {
    // The modules that write what a user reads under --lang (report.html, the console's lines, row and header
    // errors, templates' sheets, the onboarding's lines, mapping profiles and the header a file is read with).
    // Help texts (`Command*.ts`, `withDescription`) and the profile schema's descriptions stay English, as flags do.
    const folders = [
      "src/report/Html.ts",
      "src/console",
      "src/validate",
      "src/files/XlsxCell.ts",
      "src/template/Xlsx.ts",
      "src/mapping",
      "src/import/Input.ts"
    ]
    const helpCalls = new Set(["withDescription", "described"])
    const files = folders.flatMap((f) => {
      const path = Path.join(root, f)
      return Fs.statSync(path).isDirectory()
        ? Fs.readdirSync(path).filter((n) => n.endsWith(".ts")).map((n) => Path.join(path, n))
        : [path]
    }).concat(Path.join(root, "src/onboard/CommandRun.ts"))
    const sentence = /\b[a-z]{2,} [a-z]{2,} [a-z]{2,}\b/i
    const words = /\b(the|of|is|are|was|were|not|and|with|per|its|to|by|from|has|no|or)\b/gi
    const found: Array<string> = []
    for (const file of files) {
      const source = ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return
        if (ts.isCallExpression(node)) {
          const callee = node.expression
          const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : callee.getText(source)
          if (helpCalls.has(name)) return
        }
        if (
          ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) ||
          ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
        ) {
          const text = node.text
          if (sentence.test(text) && (text.match(words)?.length ?? 0) >= 2) {
            const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1
            found.push(`${Path.relative(root, file)}:${line}: ${text.slice(0, 80)}`)
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    assert.deepStrictEqual(found, [])
  })
})
