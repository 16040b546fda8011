/**
 * A mapping profile's messages under `--lang pt-BR`: the column plan printed before a run, the rows skipped as not
 * data (title rows, a "Total" footer) in summary.json and report.html, a profile's refusals (another resource, a
 * column that is not one, a source column the file lacks, a field given twice, a header row out of reach, an
 * unreadable or invalid profile), `map`'s proposal table and notes, and the header hint of a file read without a
 * profile: all in Portuguese, with the file's own words kept.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { openSource } from "../../src/files/Read.js"
import { applyProfile, planLines } from "../../src/mapping/Apply.js"
import { readProfile } from "../../src/mapping/Profile.js"
import { proposalTable, propose, sampleOf } from "../../src/mapping/Propose.js"
import { setLanguage } from "../../src/Messages.js"
import { resource } from "../../src/Resources.js"
import { put, readSummary, tempDir, validateFile } from "../import/support.js"
import { messyCustomers, messyProfile } from "../mapping/support.js"

/** Runs `body` with the messages in Portuguese, and back to English after it, however it ends. */
const inPortuguese = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => setLanguage("pt-BR")),
    () => body,
    () => Effect.sync(() => setLanguage("en"))
  )

/** Words of an English sentence that Portuguese text does not contain. */
const englishWords =
  /\b(the|of|is|are|was|were|not|and|with|per|its|their|by|from|has|have|cannot|each|every|above|below|no|none|data|column|row|rows|header|ignored|sent|given|twice|keep|why|sure|look|like|matches|review|needs|proposed|value|values|map|label)\b/i

/** `text` holds no English word, file paths aside. */
const noEnglish = (text: string, what: string) =>
  assert.notMatch(text.replace(/\S*\.(map\.json|csv)\b/g, ""), englishWords, `${what}: ${text}`)

const open = (file: string) =>
  openSource(file, { encoding: "auto", delimiter: "auto", resource: "customers", lenientHeader: true })

describe("mapping profiles under --lang pt-BR", () => {
  it.scoped("the column plan, the rows skipped as not data and report.html's plan are in Portuguese", () =>
    inPortuguese(Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", messyCustomers)
      const map = yield* readProfile(put(dir, "clientes.map.json", JSON.stringify(messyProfile)))
      const { mapping } = yield* applyProfile(yield* open(file), map, resource("customers"))
      const lines = planLines(mapping)
      assert.include(lines.find((l) => l.includes("Vendedor")), "→ (ignorada, não enviada)")
      assert.include(lines.find((l) => l.includes("Situação")), "→ active com um mapa de valores")
      assert.include(lines.find((l) => l.includes("{Rua}")), "→ address (composta)")
      assert.include(lines.find((l) => l.includes("minutes")), "→ unitMaximumTime (constante)")
      for (const line of lines) noEnglish(line.replace(/^.*→/, ""), "plan line")

      const runDir = Path.join(dir, "run")
      yield* validateFile({ resource: "customers", file, runDir, read: { encoding: "auto", delimiter: "auto", map } })
      const skipped = readSummary(runDir).mapping.skippedRows as ReadonlyArray<{ row: number; why: string }>
      assert.deepStrictEqual(skipped, [
        { row: 1, why: "acima do cabeçalho" },
        { row: 6, why: `não são dados: "Total de clientes: 3"` }
      ])
      const html = Fs.readFileSync(Path.join(runDir, "report.html"), "utf8")
      assert.match(html, /<td>renomeada, com um mapa de valores<\/td>/)
      assert.match(html, /<td>composta<\/td>/)
      assert.include(html, "linha 1 (acima do cabeçalho)")
    })))

  it.scoped("a profile's refusals name the file and property in Portuguese", () =>
    inPortuguese(Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(dir, "clientes.csv", messyCustomers)
      const refusal = (name: string, profile: unknown) =>
        Effect.gen(function*() {
          const map = yield* readProfile(put(dir, `${name}.map.json`, JSON.stringify(profile)))
          const failure = yield* Effect.flip(applyProfile(yield* open(file), map, resource("customers")))
          noEnglish(failure.detail, name)
          return failure.detail
        })
      assert.strictEqual(
        yield* refusal("other", { ...messyProfile, resource: "users" }),
        "o perfil é de users, não de customers"
      )
      assert.match(
        yield* refusal("unknown", { ...messyProfile, columns: { "Nome": "nomeFantasia" } }),
        /^columns\."Nome": "nomeFantasia" não é uma coluna de customers \(uma destas: id, externalId, /
      )
      assert.strictEqual(
        yield* refusal("lacking", { resource: "customers", fields: { address: { compose: "{Rua}, {Complemento}" } } }),
        `fields."address".compose: o arquivo ${file} não tem a coluna "Complemento" (seu cabeçalho, linha 2: Código, Nome, CNPJ, Rua, Número, Bairro, Telefone, E-mail, Situação, Vendedor, Observações)`
      )
      assert.strictEqual(
        yield* refusal("twice", { resource: "customers", columns: { "Nome": "name", "Vendedor": "name" } }),
        `columns."Vendedor": name aparece duas vezes (em coluna "Nome" e em coluna "Vendedor"); mantenha só uma`
      )
      assert.match(
        yield* refusal("far", { ...messyProfile, headerRow: 40 }),
        /^headerRow 40 \(em .*far\.map\.json\) está em branco ou não está entre as primeiras 30 linhas$/
      )
      const missing = yield* Effect.flip(readProfile(Path.join(dir, "nenhum.map.json")))
      assert.strictEqual(missing.detail, "não foi possível ler o perfil de mapeamento (ENOENT)")
      const invalid = yield* Effect.flip(readProfile(put(dir, "ruim.map.json", `{"resource": 3}`)))
      assert.match(invalid.detail, /^não é um perfil de mapeamento válido: /)
    })))

  it.scoped("map's proposal table and notes, and the header hint of a file read without a profile", () =>
    inPortuguese(Effect.gen(function*() {
      const dir = yield* tempDir
      const file = put(
        dir,
        "clientes.csv",
        [
          "Relação de clientes;;;",
          "Nome;CNPJ;Fone;Situação",
          "Padaria;11.222.333/0001-81;(11) 3333-4444;Sim",
          "Mercado;;(11) 5555-6666;Não"
        ].join("\r\n")
      )
      const { candidates } = yield* sampleOf(yield* open(file), undefined)
      const proposal = propose(resource("customers"), candidates, {})
      const table = proposalTable(proposal.proposals)
      assert.match(table[0]!, /^coluna de origem\s+→ campo\s+por quê\s+certeza\s+valores de exemplo$/)
      assert.match(
        table.find((l) => l.startsWith("Nome"))!,
        /Nome\s+name\s+o rótulo do campo|Nome\s+name\s+nome da coluna|cabeçalho "Nome"/
      )
      assert.match(table.find((l) => l.startsWith("Fone"))!, /cabeçalho "Fone"\s+alta/)
      for (const line of table) noEnglish(line.replace(/^\S+\s+\S+\s+/, "").replace(/"[^"]*"/g, ""), "table")
      assert.deepStrictEqual(proposal.notes, [
        `externalId: nenhuma coluna de chave; proposta a partir de "CNPJ" (o CPF/CNPJ de cada registro): revise-a`
      ])

      const failure = yield* Effect.flip(validateFile({ resource: "customers", file, runDir: Path.join(dir, "v") }))
      assert.include(failure.message, "o cabeçalho foi lido da linha 1; as primeiras linhas:")
      assert.include(failure.message, "  linha 2: Nome | CNPJ | Fone | Situação\n")
      assert.include(
        failure.message,
        "a linha 2 parece ser o cabeçalho (um título acima da tabela?): fsm-bulk map customers"
      )
      assert.include(failure.message, "depois valide ou importe com --map PERFIL")
    })))
})
