/**
 * Two tiers, both run by `npm test`:
 * - fast: the modules and pipelines in-process, against the real sandbox over loopback (`npm run test:fast`,
 *   no build needed);
 * - cli: the built CLI spawned as users run it (exit codes, signals, kill -9), and the fault drills
 *   (`npm run test:cli`, after `npm run build`).
 * A test file that spawns `dist/bin.js` belongs to the cli tier: list it in `cliTier`.
 */
import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

const cliTier = [
  "test/drills/**/*.test.ts",
  "test/**/cli.test.ts",
  "test/cli/durable.test.ts",
  "test/cli/footprint.test.ts",
  "test/cli/package.test.ts",
  "test/cli/progress-cli.test.ts",
  "test/export/continue.test.ts",
  "test/fleet/fence*.test.ts",
  "test/fleet/watch*.test.ts",
  "test/fleet/faults.test.ts",
  "test/fleet/defects.test.ts",
  "test/fleet/*-cli.test.ts",
  "test/fleet/chunks*.test.ts",
  "test/export/dialect.test.ts",
  "test/export/export.test.ts",
  "test/export/verify.test.ts",
  "test/fleet/export.test.ts",
  "test/fleet/onboard.test.ts",
  "test/files/Zip.test.ts",
  "test/import/conflicts-cli.test.ts",
  "test/import/dryrun-memory.test.ts",
  "test/import/identity-cli.test.ts",
  "test/import/hidden-cli.test.ts",
  "test/import/next-hints-cli.test.ts",
  "test/import/keys.test.ts",
  "test/import/run-target.test.ts",
  "test/validate/passes-cli.test.ts",
  "test/onboard/aborted.test.ts",
  "test/onboard/attachments.test.ts",
  "test/onboard/demo.test.ts",
  "test/onboard/dryrun.test.ts",
  "test/onboard/identity-cli.test.ts",
  "test/mapping/*-cli.test.ts",
  "test/onboard/resume.test.ts",
  "test/onboard/skips.test.ts",
  "test/report/**/*.test.ts",
  "test/sandbox/host.test.ts",
  "test/sandbox/kill.test.ts",
  "test/template/workbook.test.ts",
  "test/history/soak.test.ts"
]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A fast-tier file spends most of its time waiting (loopback answers, sandbox latency, fsync): one file more
    // than there are cores keeps them busy (vitest's default is one less: a single file at a time on 2 cores).
    maxWorkers: availableParallelism() + 1,
    minWorkers: 1,
    projects: [
      { extends: true, test: { name: "fast", include: ["test/**/*.test.ts"], exclude: cliTier } },
      // The cli tier's files two at a time: each spawns CLIs that want the cores themselves (three such files at
      // once on 2 cores pushed tests past their timeouts on a loaded machine), but the fleet's files mostly wait
      // on leases and pauses, and one at a time made the tier 13 minutes long.
      { extends: true, test: { name: "cli", include: cliTier, poolOptions: { forks: { maxForks: 2, minForks: 1 } } } }
    ]
  }
})
