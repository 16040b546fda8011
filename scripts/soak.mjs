#!/usr/bin/env node
// `npm run soak -- [--minutes N] [--seed FIRST] [--count N] [--length N] [--jobs N] [--all] [--out FILE]`: generated
// histories (test/history) until the time is up, `--jobs` at once (default 4, each with a sandbox of its own), the
// built CLI killed with SIGKILL among their actions.
// --fleet runs the fleet's histories instead (test/history/fleet.ts: a store, workers, two sandboxes each; one
// backend after the other; --jobs defaults to 1 there).
// --all puts back the features KNOWN_OPEN leaves out (the known open defects). Needs `npm run build` (the script
// `soak` runs it first). The findings go to --out (default runs/soak.json) and to the terminal.
import { spawnSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"

const args = process.argv.slice(2)
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback
}
const known = new Set(["--minutes", "--seed", "--count", "--length", "--jobs", "--out", "--all", "--fleet"])
const unknown = args.filter((a, i) => a.startsWith("--") && !known.has(a) && !(i > 0 && known.has(args[i - 1])))
if (unknown.length > 0) {
  console.error(`soak: unknown flag ${unknown[0]} (flags: ${[...known].join(", ")})`)
  process.exit(2)
}
const out = flag("out", "runs/soak.json")
mkdirSync(dirname(out), { recursive: true })
const env = {
  ...process.env,
  HISTORY_SOAK: "1",
  HISTORY_MINUTES: flag("minutes", "10"),
  HISTORY_SEED: flag("seed", String(Date.now() % 1_000_000)),
  HISTORY_LENGTH: flag("length", "12"),
  HISTORY_JOBS: flag("jobs", args.includes("--fleet") ? "1" : "4"),
  HISTORY_SOAK_OUT: out,
  ...(flag("count", undefined) !== undefined ? { HISTORY_COUNT: flag("count") } : {}),
  ...(args.includes("--all") ? { HISTORY_ALL: "1" } : {}),
  ...(args.includes("--fleet") ? { HISTORY_FLEET: "1", HISTORY_LENGTH: flag("length", "8") } : {})
}
console.error(
  `soak${
    env.HISTORY_FLEET ? " (fleet)" : ""
  }: ${env.HISTORY_MINUTES} min from seed ${env.HISTORY_SEED}, ${env.HISTORY_JOBS} at once${
    env.HISTORY_ALL ? ", known open defects included" : ""
  }; findings in ${out}`
)
const file = args.includes("--fleet") ? "test/history/fleet-cli.test.ts" : "test/history/soak.test.ts"
const run = spawnSync("npx", ["vitest", "run", "--project", "cli", file], {
  env,
  stdio: "inherit"
})
process.exit(run.status ?? 1)
