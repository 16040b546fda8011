/**
 * Two tiers, both run by `npm test`:
 * - fast: the modules and pipelines in-process, against the real sandbox over loopback (`npm run test:fast`,
 *   no build needed);
 * - cli: the built CLI spawned as users run it (exit codes, signals, kill -9), and the fault drills
 *   (`npm run test:cli`, after `npm run build`).
 * A test file that spawns `dist/bin.js` belongs to the cli tier: name it `cli.test.ts` or `*-cli.test.ts`.
 */
import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// The cli tier by name: a file that spawns the built CLI (or waits on servers it starts: the fleet, a browser) is
// named `cli.test.ts` or `*-cli.test.ts`; the fault drills are all of test/drills/.
const cliTier = [
  "test/**/cli.test.ts",
  "test/**/*-cli.test.ts",
  "test/drills/**/*.test.ts",
  "test/history/soak.test.ts"
]

/**
 * Whether this run is the cli tier alone (`vitest run --project cli`, as `npm test` runs it): vitest 3.2 sizes its pool
 * from the root options only, so the tier's own count is chosen here from the command line.
 */
const cliTierOnly = process.argv.some((arg, i) =>
  arg === "--project=cli" || (arg === "--project" && process.argv[i + 1] === "cli")
)

/**
 * Files at a time. The fast tier: one more than there are cores (its files mostly wait on loopback answers, sandbox
 * latency and fsync, yet three at a time on 2 cores leave the machine 6.5 % idle: more would not help). The cli tier:
 * two per core and one more. Its files wait much longer (leases, budgets, pauses, the takeovers' clocks), and three at
 * a time left 2 cores about a fifth idle (1.6 cores busy, 2026-11-30: 1,535 s of CPU in 987 s); five at a time on 2
 * cores took 749 s where three had taken 832-882 s, every file passing (docs/benchmarks.md, "Where the suite's CPU
 * goes").
 */
const filesAtATime = cliTierOnly ? availableParallelism() * 2 + 1 : availableParallelism() + 1

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One PostgreSQL cluster for the run's fleet tests, started by the first that needs it (test/fleet/support.ts)
    globalSetup: ["test/fleet/postgres-run.ts"],
    // More files than cores (`filesAtATime`, above): vitest's default is one less than the cores, a single file at a
    // time on 2 cores.
    maxWorkers: filesAtATime,
    // As many workers kept as started: with modules kept between files (`--no-isolate`), tinypool ending a worker
    // the pool no longer needed before the run's end made vitest 3.2 report "Terminating worker thread" as an
    // unhandled rejection and exit 1 after every file had passed (vitest-dev/vitest#8564 describes the same).
    minWorkers: filesAtATime,
    // Vitest 3.2 reads the pool's isolation (a new process per file) and its size from the root options only, and
    // has no `--setupFiles` flag: each tier is its own `vitest run --project … --no-isolate` (package.json), and each
    // project names its own set-up file below (harmless when a file does get a process of its own).
    projects: [
      // The fast tier's workers keep their modules from one file to the next (`isolate: false`): vitest's collect
      // (importing each file's modules anew) cost more than the files' tests. What modules keep at their top level
      // is put back before each file (test/setup/fresh-module-state.ts).
      {
        extends: true,
        test: {
          name: "fast",
          include: ["test/**/*.test.ts"],
          exclude: cliTier,
          isolate: false,
          // The tiers one after the other, the fast one first.
          sequence: { groupOrder: 0 },
          // The same guard after each file as the cli tier's (below): a file's leftovers fail that file, not the
          // one that happens to run next in its worker.
          setupFiles: ["test/setup/excel-first.ts", "test/setup/fresh-module-state.ts", "test/setup/file-leaks.ts"]
        }
      },
      // The cli tier runs the root's maxWorkers files at a time (`filesAtATime`: five on 2 cores when it runs alone,
      // as `npm test` runs it). Vitest 3.2 sizes a pool from the root options only, so a pool size set here would not
      // be applied; to run the tier with another count, pass `--maxWorkers N --minWorkers N` to
      // `vitest run --project cli` (docs/development.md).
      // Its files share their workers too (`--no-isolate`): a fork per file cost 2-3 s of CPU before the file's first
      // test (vitest's start, collect; docs/benchmarks.md, "The cli tier's files share their workers"). The guard
      // test/setup/file-leaks.ts (both tiers) puts back env, cwd and exit code after each file and fails a file that leaves a
      // child, server, ref'd timer or signal listener in the shared process. A test waits for a spawned command
      // without blocking the worker (test/spawned.ts, not spawnSync): a block past 60 s times out the worker's
      // calls to vitest ("Timeout calling onTaskUpdate"). Many cli files also run src/ in process (a sandbox, the
      // fleet's submits: test/fleet/in-process.ts), so what src/ modules keep at their top level is put back before
      // each file as in the fast tier.
      {
        extends: true,
        test: {
          name: "cli",
          include: cliTier,
          sequence: { groupOrder: 1 },
          setupFiles: ["test/setup/excel-first.ts", "test/setup/fresh-module-state.ts", "test/setup/file-leaks.ts"]
        }
      }
    ]
  }
})
