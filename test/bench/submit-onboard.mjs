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
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { writeCustomerWorkbook } from "../fleet/customer-workbook.mjs"
import { fleetKey, initFleet, startStore } from "./fleet.mjs"
import { bin, runNode } from "./measure.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    rows: { type: "string", default: "48000" }
  }
})

const dir = mkdtempSync(join(tmpdir(), "fsm-bench-onboard-"))
const backends = flags.backend === "both" ? ["postgres", "redis"] : [flags.backend]
try {
  for (const rows of flags.rows.split(",").map(Number)) {
    const input = await writeCustomerWorkbook(dir, rows, 72, `cadastro-${rows}.xlsx`)
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
