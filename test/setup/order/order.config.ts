/**
 * A vitest run of the two fixtures beside this file, in name order, in one worker that keeps its modules from one
 * file to the next, with a tier's set-up files as vitest.config.ts names them (`ORDER_TIER`: fast or cli). Run by
 * test/setup/excel-order-cli.test.ts.
 */
import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import root from "../../../vitest.config.js"

class ByName extends BaseSequencer {
  override sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    return Promise.resolve([...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId)))
  }
}

const tier = process.env.ORDER_TIER ?? "cli"
const project = (root.test?.projects ?? []).find(
  (p): p is { test: { name: string; setupFiles: Array<string> } } =>
    typeof p === "object" && (p as { test?: { name?: string } }).test?.name === tier
)
if (project === undefined) throw new Error(`vitest.config.ts has no project named ${tier}`)

export default defineConfig({
  test: {
    include: ["test/setup/order/*.fixture.ts"],
    // What the set-up files expect of the run (test/setup/file-leaks.ts reads the PostgreSQL run's directory).
    globalSetup: root.test?.globalSetup ?? [],
    isolate: false,
    maxWorkers: 1,
    minWorkers: 1,
    setupFiles: project.test.setupFiles,
    sequence: { sequencer: ByName }
  }
})
