/**
 * The memory and wall time of one chunked `submit` (docs/benchmarks.md, "Memory of a chunked submit"): a fresh
 * fleet on each backend, one account, `submit import customers` of a generated `externalId,name` file of `--rows`
 * rows (default 1,000,000, 27 MB) with `--chunk-rows` (default 10,000: 100 parts). No worker runs: what is measured
 * is the submit alone (validate, split, staged store, publish). Prints its exit code, wall time, peak RSS and, on
 * PostgreSQL with `--statements`, the costliest statements (pg_stat_statements).
 *
 *   npm run build && node test/bench/submit-stage.mjs [--backend postgres|redis|both] [--rows 1000000]
 *     [--chunk-rows 10000] [--statements] [--profile DIR] [--stage-bytes N]
 *
 * `--profile DIR`: the submit's CPU profiles (node --cpu-prof); `--stage-bytes N`: pieces and batches of N bytes
 * (FSM_FLEET_STAGE_BYTES; 4 MiB by default), to see how storing a file grows with its number of pieces.
 */
import { execFileSync } from "node:child_process"
import { parseArgs } from "node:util"
import { customersCsv } from "./data.mjs"
import { fleetKey, initFleet, startStore } from "./fleet.mjs"
import { bin, runNode } from "./measure.mjs"

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    rows: { type: "string", default: "1000000" },
    "chunk-rows": { type: "string", default: "10000" },
    statements: { type: "boolean", default: false },
    profile: { type: "string" },
    "stage-bytes": { type: "string" }
  }
})

const rows = Number(flags.rows)
const { path: file } = await customersCsv(rows, ["externalId", "name"], `customers-2col-${rows}.csv`)
const backends = flags.backend === "both" ? ["postgres", "redis"] : [flags.backend]

for (const backend of backends) {
  const store = await startStore(backend, { statements: flags.statements })
  try {
    const url = await store.database()
    const env = {
      FSM_FLEET_URL: url,
      FSM_FLEET_KEY: fleetKey,
      ...(flags["stage-bytes"] === undefined ? {} : { FSM_FLEET_STAGE_BYTES: flags["stage-bytes"] })
    }
    await initFleet(env, [{ name: "acme", url: "http://127.0.0.1:9/v2", apiKey: "k", apiToken: "t" }])
    const load = execFileSync("uptime", { encoding: "utf8" }).trim()
    const r = await runNode(
      [
        ...(flags.profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${flags.profile}`]),
        bin,
        "submit",
        "import",
        "customers",
        file,
        "--account",
        "acme",
        "--chunk-rows",
        flags["chunk-rows"]
      ],
      { env }
    )
    console.log(`${backend}: exit ${r.code}, wall ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMiB?.toFixed(0)} MiB`)
    console.log(`  load before: ${load}`)
    console.log(`  load after:  ${execFileSync("uptime", { encoding: "utf8" }).trim()}`)
    if (r.code !== 0) console.log(r.stderr.slice(-2000))
    if (flags.statements && store.statements !== undefined) {
      for (const s of await store.statements(url)) {
        console.log(`  ${s.calls} × ${Number(s.total).toFixed(0)} ms (mean ${Number(s.mean).toFixed(1)}): ${s.query}`)
      }
    }
  } finally {
    await store.stop()
  }
}
