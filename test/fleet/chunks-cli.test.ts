/**
 * Large files in parts, compared with a single `import` of the same file: a CSV whose key repeats in another part
 * reports that row as a single run does (same status and message, on the same row), and an XLSX file is split
 * like a CSV (source row numbers, reports merged in row order), with its own repeated key across parts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import ExcelJS from "exceljs"
import { readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { customersFile, readReport, tempDir } from "../drills/support.js"
import { importInto } from "../import/support.js"
import { acmeFleet, lastJson, startPostgres, startWorker } from "./support.js"

const accounts = [
  { apiKey: "fleet-key", apiToken: "fleet-token" },
  { apiKey: "alone-key", apiToken: "alone-token" }
]

/** A customers CSV of `rows` rows whose row `copyTo` (0-based) repeats row `copyFrom` whole. */
const withRepeat = (
  dir: string,
  name: string,
  rows: number,
  invalidAt: ReadonlyArray<number>,
  copy: [number, number]
) => {
  const made = customersFile(dir, name, rows, invalidAt)
  const lines = readFileSync(made.file, "utf8").trimEnd().split("\n")
  lines[copy[1] + 1] = lines[copy[0] + 1]!
  writeFileSync(made.file, `${lines.join("\n")}\n`)
  return made.file
}

/** The same rows as a workbook (one sheet, text cells). */
const asWorkbook = (csv: string, xlsx: string) =>
  Effect.promise(async () => {
    const wb = new ExcelJS.Workbook()
    const ws = wb.addWorksheet("Clientes")
    for (const line of readFileSync(csv, "utf8").trimEnd().split("\n")) ws.addRow(line.split(","))
    await wb.xlsx.writeFile(xlsx)
    return xlsx
  })

/** A fleet on a throwaway PostgreSQL with account `acme` (the first of `accounts`) on a fresh sandbox. */
const fleetWithAcme = Effect.flatMap(startPostgres, (server) => acmeFleet(server.url, { accounts }))

/** Runs `file` through the fleet in parts and through a single `import`; returns both reports. */
const bothWays = (file: string, chunks: number) =>
  Effect.gen(function*() {
    const { dir, env, run, sandbox } = yield* fleetWithAcme
    const submitted = yield* run([
      "submit",
      "import",
      "customers",
      file,
      "--account",
      "acme",
      "--mode",
      "create",
      "--chunk-rows",
      "40",
      "--json"
    ])
    assert.strictEqual(submitted.code, 0, submitted.stderr)
    const job = lastJson(submitted.stdout).job as string
    assert.strictEqual(lastJson(submitted.stdout).chunks, chunks)
    const worker = yield* startWorker(["--egress-id", "w41", "--jobs", "3"], env)
    const waited = yield* run(["wait", job])
    assert.strictEqual(waited.code, 1, `${waited.stderr}\n${worker.stderr()}`)
    const fleetDir = Path.join(dir, "fleet")
    assert.strictEqual((yield* run(["fetch", job, "--out", fleetDir])).code, 0)

    // The single import in process: the same pipeline as `fsm-bulk import`, without a CLI start.
    const aloneDir = Path.join(dir, "alone")
    const alone = yield* importInto(
      sandbox,
      { resource: "customers", file, mode: "create", runDir: aloneDir },
      accounts[1]!.apiKey
    )
    assert.strictEqual(alone.exitCode, 1)
    const records = (key: string) =>
      Effect.map(sandbox.control.records(key, "customers"), (rs) => rs.map((c) => String(c.externalId)).sort())
    assert.deepStrictEqual(yield* records(accounts[0]!.apiKey), yield* records(accounts[1]!.apiKey))
    const rowsOf = (runDir: string) =>
      readReport(runDir).map((r) => [r._row, r._status, r._error, r.externalId, r.name, r.cpfCnpj])
    return { fleet: rowsOf(fleetDir), alone: rowsOf(aloneDir) }
  })

describe("large files in parts", () => {
  it.scopedLive(
    "a key repeated in another part is reported as a single import reports it",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        // 100 rows in parts of 40: row 95 (part 3) repeats row 12 (part 1); row 30 has a wrong check digit.
        const file = withRepeat(dir, "clientes.csv", 100, [28], [10, 93])
        const { alone, fleet } = yield* bothWays(file, 3)
        const repeated = alone.find((r) => r[0] === "95")!
        assert.strictEqual(repeated[1], "invalid")
        assert.include(repeated[2], "repeats row 12")
        assert.deepStrictEqual(fleet, alone)
      }),
    { timeout: 300_000 }
  )

  it.scopedLive(
    "an XLSX file is split into parts and reported in row order, as a single import",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const csv = withRepeat(dir, "clientes.csv", 100, [28], [50, 85])
        const xlsx = yield* asWorkbook(csv, Path.join(dir, "clientes.xlsx"))
        const { alone, fleet } = yield* bothWays(xlsx, 3)
        assert.deepStrictEqual(fleet.map((r) => Number(r[0])), Array.from({ length: 100 }, (_, i) => i + 2))
        assert.strictEqual(alone.find((r) => r[0] === "87")![1], "invalid")
        assert.deepStrictEqual(fleet, alone)
      }),
    { timeout: 300_000 }
  )
})

describe("files whose rows name each other", () => {
  it.scopedLive(
    "are not split: one worker runs the file whole, and a row finds the parent a later part's row creates",
    () =>
      Effect.gen(function*() {
        const { dir, env, run, sandbox } = yield* fleetWithAcme
        // 100 equipments; the first (row 2) names the last (row 101) as its parent: parts of 40 would put them
        // on different workers at once.
        const lines = ["externalId,name,parentEquipmentExternalId"]
        for (let i = 1; i <= 100; i++) lines.push(`EQP-${i},Equipamento ${i},${i === 1 ? "EQP-100" : ""}`)
        const file = Path.join(dir, "equipamentos.csv")
        writeFileSync(file, `${lines.join("\n")}\n`)
        const submitted = yield* run([
          "submit",
          "import",
          "equipments",
          file,
          "--account",
          "acme",
          "--mode",
          "create",
          "--chunk-rows",
          "40",
          "--json"
        ])
        assert.strictEqual(submitted.code, 0, submitted.stderr)
        assert.strictEqual(lastJson(submitted.stdout).chunks, 0)
        assert.include(lastJson(submitted.stdout).whole as string, "row 2 names the record row 101 writes")
        assert.include(submitted.stderr, "not split into parts, because its rows name each other")
        const job = lastJson(submitted.stdout).job as string
        const worker = yield* startWorker(["--egress-id", "w42"], env)
        const waited = yield* run(["wait", job])
        assert.strictEqual(waited.code, 0, `${waited.stderr}\n${worker.stderr()}`)
        const fetched = Path.join(dir, "fleet")
        assert.strictEqual((yield* run(["fetch", job, "--out", fetched])).code, 0)
        assert.deepStrictEqual([...new Set(readReport(fetched).map((r) => r._status))], ["created"])
        const records = yield* sandbox.control.records(accounts[0]!.apiKey, "equipments")
        const byKey = new Map(records.map((r) => [String(r.externalId), r]))
        assert.strictEqual(records.length, 100)
        assert.strictEqual(byKey.get("EQP-1")!.parentEquipmentId, byKey.get("EQP-100")!.id)
      }),
    { timeout: 300_000 }
  )
})
