/**
 * `fsm-bulk validate` when report.xlsx's thread (src/files/XlsxWorker.js) fails mid-run, by a fault injected
 * through `FSM_XLSX_DEBUG_FAULT` once it has written some rows: the command ends with exit 2 (a file that could not
 * be written, nothing sent: docs/cli-contract.md), says which file, and leaves no report behind as if complete.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, readdirSync } from "node:fs"
import * as Path from "node:path"
import { spawned } from "../spawned.js"
import { bin, cp1252, put, root, tempDir } from "./support.js"

/** Rows enough for the workbook to go on its thread (past 2,000: src/files/Write.ts) and to fail well inside it. */
const rows = 6000

/** A customers file as implementers send it: Windows-1252, `;`, CRLF, pt-BR text and decimal commas. */
const customersFile = (dir: string) => {
  const lines = ["externalId;name;address;latitude;longitude;active"]
  for (let i = 1; i <= rows; i++) {
    lines.push(`CLI-${i};Padaria São João ${i};Rua da Consolação, ${i} – São Paulo;-23,5${i % 10};-46,6${i % 10};sim`)
  }
  // "–" has a byte in Windows-1252 (0x96) but none in Latin-1: written by hand.
  return put(dir, "clientes.csv", cp1252(`${lines.join("\r\n")}\r\n`.replaceAll("–", "\u0096")))
}

const validateWithFault = (file: string, out: string, fault: string) => {
  assert.isTrue(existsSync(bin), "build first: npm run build")
  return spawned(process.execPath, [bin, "validate", "customers", file, "--out", out, "--json"], {
    cwd: root,
    timeout: 120_000,
    env: { ...process.env, FSM_XLSX_DEBUG_FAULT: fault }
  })
}

describe("validate when the workbook's thread fails", () => {
  for (const fault of ["throw:3000", "exit:3000"]) {
    it.scoped(`${fault}: exit 2 naming report.xlsx, no report left in the run directory`, () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const file = customersFile(dir)
        const out = Path.join(dir, "run")
        const run = yield* validateWithFault(file, out, fault)
        assert.strictEqual(run.signal, null, `validate hung or was killed\n${run.stderr}`)
        assert.strictEqual(run.status, 2, `exit ${run.status}\n${run.stderr}`)
        const last = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as {
          exitCode: number
          error: { tag: string; message: string }
        }
        assert.strictEqual(last.exitCode, 2)
        assert.strictEqual(last.error.tag, "WriteError")
        assert.include(last.error.message, `cannot write ${Path.join(out, "report.xlsx")}`)
        assert.include(run.stderr, "report.xlsx")
        // Nothing that looks finished: no report, no summary, no .tmp left over (a run directory this run made goes).
        const left = existsSync(out) ? readdirSync(out) : []
        assert.deepStrictEqual(left.filter((name) => /^report\.|^summary\.json/.test(name)), [], left.join(", "))
      }))
  }
})
