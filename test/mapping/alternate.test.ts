/**
 * Alternate keys against the server: a row whose CPF/CNPJ (an alternate key the profile names) is already on a
 * server record with another key is reported before anything is sent, `invalid` or as a named warning as the
 * profile says, in a dry run too; the records are read back from the sandbox. The values are looked up with the
 * import's own batched lookups, not a list walk per row.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { readProfile } from "../../src/mapping/Profile.js"
import { importInto, put, readReport, startTestSandbox, tempDir } from "../import/support.js"
import { listCalls } from "../onboard/support.js"
import { brazilianList, cnpj } from "./support.js"

const header = "Nome;CNPJ;Ativo"
const profile = (severity: "invalid" | "warning") => ({
  resource: "customers",
  columns: { Nome: "name", CNPJ: "cpfCnpj", Ativo: "active" },
  fields: { externalId: { compose: "{CNPJ}" }, active: { values: { Sim: "true", "Não": "false" } } },
  alternateKeys: { cpfCnpj: severity }
})

const statuses = (runDir: string) => readReport(runDir).map((r) => `${r._row}:${r._status}`)

describe("alternate keys against the server", () => {
  it.scopedLive("a CNPJ already on a server record with another key: invalid, unsent, in a dry run too", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const apiKey = sandbox.accounts[0]!.apiKey
      const dir = yield* tempDir
      // Already on the server, typed in by hand long ago: its own key, the same CNPJ as the customer's row 4.
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "old.csv", `externalId,name,cpfCnpj\nCLI-0042,Padaria (cadastro antigo),${cnpj(2)}\n`),
        runDir: Path.join(dir, "old")
      })
      put(
        dir,
        "clientes.csv",
        brazilianList("Clientes", header, [
          `Mercado Novo;${cnpj(1)};Sim`,
          `Padaria São João;${cnpj(2)};Sim`,
          `Açougue;${cnpj(3)};Não`
        ])
      )
      const map = yield* readProfile(put(dir, "clientes.map.json", JSON.stringify(profile("invalid"))))
      const read = { encoding: "auto", delimiter: "auto", map } as const

      const dry = yield* importInto(sandbox, {
        resource: "customers",
        file: Path.join(dir, "clientes.csv"),
        runDir: Path.join(dir, "dry"),
        read,
        dryRun: true
      })
      assert.strictEqual(dry.exitCode, 1)
      assert.deepStrictEqual(statuses(Path.join(dir, "dry")), ["3:would-create", "4:invalid", "5:would-create"])

      const before = (yield* sandbox.control.requests).length
      const run = yield* importInto(sandbox, {
        resource: "customers",
        file: Path.join(dir, "clientes.csv"),
        runDir: Path.join(dir, "run"),
        read
      })
      assert.strictEqual(run.exitCode, 1)
      const report = readReport(Path.join(dir, "run"))
      assert.deepStrictEqual(report.map((r) => `${r._row}:${r._status}`), ["3:created", "4:invalid", "5:created"])
      assert.strictEqual(
        report[1]!._error!.replace(/id \d+/, "id N"),
        `cpfCnpj: "${
          cnpj(2).replace(/\D/g, "")
        }" is already on the server, in the record of externalId "CLI-0042", id N: cpfCnpj is an alternate key, so this row would make a second record of it`
      )
      // Read back: no second Padaria; the old record untouched.
      const records = yield* sandbox.control.records(apiKey, "customers")
      assert.deepStrictEqual(
        records.map((r) => `${r.externalId}|${r.description}`).sort(),
        [`${cnpj(1)}|Mercado Novo`, `${cnpj(3)}|Açougue`, "CLI-0042|Padaria (cadastro antigo)"].sort()
      )
      // The CNPJs were looked up as the keys are, in one batch: the keys' lookup (a 404 for "none of these" is read
      // twice to be sure) and one read for the three CNPJs, not one a row.
      assert.isAtMost(listCalls((yield* sandbox.control.requests).slice(before), "customers").length, 3)
    }))

  it.scopedLive("with \"warning\", the row is sent and its _error names the record it may duplicate", () =>
    Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const apiKey = sandbox.accounts[0]!.apiKey
      const dir = yield* tempDir
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "old.csv", `externalId,name,cpfCnpj\nCLI-0042,Padaria (cadastro antigo),${cnpj(2)}\n`),
        runDir: Path.join(dir, "old")
      })
      put(dir, "clientes.csv", brazilianList("Clientes", header, [`Padaria São João;${cnpj(2)};Sim`]))
      const map = yield* readProfile(put(dir, "clientes.map.json", JSON.stringify(profile("warning"))))
      const run = yield* importInto(sandbox, {
        resource: "customers",
        file: Path.join(dir, "clientes.csv"),
        runDir: Path.join(dir, "run"),
        read: { encoding: "auto", delimiter: "auto", map }
      })
      assert.strictEqual(run.exitCode, 0)
      const report = readReport(Path.join(dir, "run"))
      assert.strictEqual(report[0]!._status, "created")
      assert.match(
        report[0]!._error!,
        /warning: cpfCnpj: ".*" is already on the server, in the record of externalId "CLI-0042"/
      )
      assert.strictEqual((yield* sandbox.control.records(apiKey, "customers")).length, 2)
    }))
})
