/**
 * The memory and wall time of one `submit onboard` (docs/benchmarks.md, "Memory of submit onboard"): a fresh fleet on
 * each backend, one account, a customer's pt-BR workbook (sheets `Segmentos`, `Clientes`; Portuguese headers read
 * through `--map` profiles) of `--rows` customers, each name padded with 72 random characters as the staging test's
 * big workbook is (48,000 rows: about 5 MB once zipped). No worker runs: what is measured is the submit alone (the
 * offline check of the whole workbook, then the staged store in 4 MiB pieces, then publish). Prints the workbook's
 * size, the exit code, wall time and peak RSS.
 *
 *   npm run build && node test/bench/submit-onboard.mjs [--backend postgres|redis|both] [--rows 48000[,96000…]]
 */
import ExcelJS from "exceljs"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { fleetKey, initFleet, startStore } from "./fleet.mjs"
import { bin, runNode } from "./measure.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    rows: { type: "string", default: "48000" }
  }
})

/** The workbook and its two profiles in `dir`, as test/fleet/workbook.ts's `customerWorkbook` makes them. */
const workbook = async (dir, customers) => {
  const book = new ExcelJS.Workbook()
  book.addWorksheet("Segmentos").addRows([["Descrição"], ["Varejo"], ["Atacado"]])
  const sheet = book.addWorksheet("Clientes")
  sheet.addRow(["Código", "Nome", "Segmento"])
  for (let i = 0; i < customers; i++) {
    sheet.addRow([
      `C-${i + 1}`,
      `Padaria São João ${i + 1} ${randomBytes(72).toString("base64")}`,
      i % 3 === 2 ? "Atacado" : "Varejo"
    ])
  }
  const file = join(dir, `cadastro-${customers}.xlsx`)
  writeFileSync(file, new Uint8Array(await book.xlsx.writeBuffer()))
  const profile = (name, body) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(body))
    return path
  }
  const maps = [
    `segments=${
      profile("segmentos.map.json", {
        resource: "segments",
        sheet: "Segmentos",
        columns: { "Descrição": "description" }
      })
    }`,
    `customers=${
      profile("clientes.map.json", {
        resource: "customers",
        sheet: "Clientes",
        columns: { "Código": "externalId", "Nome": "name", "Segmento": "segmentDescription" }
      })
    }`
  ]
  return { file, maps: maps.flatMap((m) => ["--map", m]) }
}

const dir = mkdtempSync(join(tmpdir(), "fsm-bench-onboard-"))
const backends = flags.backend === "both" ? ["postgres", "redis"] : [flags.backend]
try {
  for (const rows of flags.rows.split(",").map(Number)) {
    const input = await workbook(dir, rows)
    const mb = (statSync(input.file).size / 1024 / 1024).toFixed(1)
    for (const backend of backends) {
      const store = await startStore(backend)
      try {
        const url = await store.database()
        const env = { FSM_FLEET_URL: url, FSM_FLEET_KEY: fleetKey }
        await initFleet(env, [{ name: "acme", url: "http://127.0.0.1:9/v2", apiKey: "k", apiToken: "t" }])
        const load = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()
        const r = await runNode([bin, "submit", "onboard", input.file, ...input.maps, "--account", "acme"], { env })
        const after = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()
        console.log(
          `${backend}: ${rows} rows (${mb} MiB): exit ${r.code}, wall ${(r.ms / 1000).toFixed(1)} s, ` +
            `peak RSS ${r.rssMiB?.toFixed(0)} MiB; load ${load} → ${after}`
        )
        if (r.code !== 0) console.log(r.stderr.slice(-2000))
      } finally {
        await store.stop()
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
