/**
 * Read before write, measured once (not a timed test): a 1,000-row upsert of customers into an account that
 * holds 1,000 and one that holds 50,000 of them, every row changing one field, then the same file again (no row
 * changes). Counts what the sandbox received: writes, reads (the batched lookups), and requests per row.
 *
 *   npm run build && node test/bench/readbefore.mjs [accountSizes…]
 *
 * The account is seeded with parallel PUTs to a sandbox without a budget; the sandbox runs without latency and
 * with a budget high enough never to wait (requests are counted, not timed).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { customerBody, seedCustomers } from "./data.mjs"
import { jsonSummary, runCli } from "./measure.mjs"
import { cliEnv, openSandbox } from "./sandbox.mjs"

const rows = 1000
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const accounts = sizes.length > 0 ? sizes : [1000, 50_000]

const count = (log, from) => {
  const part = log.slice(from).filter((e) => !/\/login$/i.test(e.path))
  return {
    writes: part.filter((e) => e.method !== "GET").length,
    reads: part.filter((e) => e.method === "GET").length,
    requests: part.length
  }
}

const results = []
for (const records of accounts) {
  const work = mkdtempSync(join(tmpdir(), "fsm-bench-rbw-"))
  const sandbox = await openSandbox({ rate: { limit: 1_000_000, windowMs: 1000 } })
  try {
    await seedCustomers(sandbox, records)
    // Rows spread over the account (every n-th record), each with a new name.
    const step = Math.floor(records / rows)
    const lines = ["externalId,name"]
    for (let r = 0; r < rows; r++) lines.push(`${customerBody(r * step).externalId},Renamed ${r}`)
    const file = join(work, "customers.csv")
    writeFileSync(file, `${lines.join("\n")}\n`)
    const env = cliEnv(sandbox)
    const at1 = (await sandbox.requests()).length
    const first = await runCli(["import", "customers", file, "--out", join(work, "first"), "--json"], { env })
    const changed = count(await sandbox.requests(), at1)
    const at2 = (await sandbox.requests()).length
    const again = await runCli(["import", "customers", file, "--out", join(work, "again"), "--json"], { env })
    const unchanged = count(await sandbox.requests(), at2)
    results.push({
      account: records,
      rows,
      changed: { ...changed, perRow: changed.requests / rows, counts: jsonSummary(first.stdout).counts.updated },
      unchanged: {
        ...unchanged,
        perRow: unchanged.requests / rows,
        counts: jsonSummary(again.stdout).counts.unchanged
      }
    })
  } finally {
    await sandbox.stop()
    rmSync(work, { recursive: true, force: true })
  }
}
console.log(JSON.stringify(results, null, 2))
