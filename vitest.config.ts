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

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One PostgreSQL cluster for the run's fleet tests, started by the first that needs it (test/fleet/support.ts)
    globalSetup: ["test/fleet/postgres-run.ts"],
    // A fast-tier file spends most of its time waiting (loopback answers, sandbox latency, fsync): one file more
    // than there are cores keeps them busy (vitest's default is one less: a single file at a time on 2 cores).
    maxWorkers: availableParallelism() + 1,
    // As many workers kept as started: with modules kept between files (`--no-isolate`), tinypool ending a worker
    // the pool no longer needed before the run's end made vitest 3.2 report "Terminating worker thread" as an
    // unhandled rejection and exit 1 after every file had passed (vitest-dev/vitest#8564 describes the same).
    minWorkers: availableParallelism() + 1,
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
      // The cli tier runs the root's maxWorkers files at a time (cores + 1: three on 2 cores). Vitest 3.2 sizes a
      // pool from the root options only, so a pool size set here would not be applied; to run the tier with
      // another count, pass `--maxWorkers N --minWorkers N` to `vitest run --project cli` (docs/development.md).
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
