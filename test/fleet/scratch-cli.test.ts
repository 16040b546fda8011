/**
 * A worker's scratch folders (the jobs' files and reports: customer data), on each backend with the built CLI: a
 * worker starting removes the folders its egress id's killed workers left (their `.owner` pid is dead), and never
 * the folder of a live worker of the id (an older one still winding down its job: removing it once lost a running
 * job's report, exit 3 "cannot write … no such file"). Deterministic: the folders are made by the test, one owned
 * by a live process (the test's own), one by a process that has exited.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { availableBackends, eventually, fleetEnv, initFleet, startFleetBackend, startWorker } from "./support.js"

const each = it.scopedLive.each(availableBackends)

/** A scratch folder of `egressId` as a worker makes it, owned by `pid`, holding a report. */
const scratchOf = (egressId: string, pid: number) => {
  const dir = mkdtempSync(Path.join(tmpdir(), `fsm-fleet-${egressId}-`))
  writeFileSync(Path.join(dir, ".owner"), String(pid))
  writeFileSync(Path.join(dir, "report.csv"), "row;status\n2;created\n")
  return dir
}

describe("a worker's scratch folders", () => {
  each(
    "a starting worker removes a dead worker's folder of its id, never a live one's ($backend)",
    (b) =>
      Effect.gen(function*() {
        const server = yield* startFleetBackend(b.backend)
        const env = fleetEnv(server.url)
        yield* initFleet(server.url)
        const egressId = `scratch-${b.backend}-${process.pid}`
        // A process that has ended: its pid is dead.
        const ended = spawnSync(process.execPath, ["-e", "0"]).pid
        const live = scratchOf(egressId, process.pid)
        const dead = scratchOf(egressId, ended)
        // Another id that starts with this one and a dash: not this worker's to clean.
        const other = scratchOf(`${egressId}-ab`, ended)
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const dir of [live, dead, other]) rmSync(dir, { recursive: true, force: true })
          })
        )
        const worker = yield* startWorker(["--egress-id", egressId], env)
        yield* eventually("the worker is ready", () => worker.stderr().includes("ready"), 60_000, worker.stderr)
        assert.isTrue(existsSync(Path.join(live, "report.csv")), "a live worker's folder is kept, with its report")
        assert.isFalse(existsSync(dead), "a dead worker's folder is removed")
        assert.isTrue(existsSync(other), "another id's folder is not this worker's")
        assert.strictEqual(readFileSync(Path.join(live, ".owner"), "utf8"), String(process.pid))
      }),
    { timeout: 120_000 }
  )
})
