/**
 * Helpers of the onboarding tests: a sandbox on a free loopback port (answers shown after a few hundred ms), the
 * real client of it, onboardings run in process, temporary directories with CSV files written byte for byte,
 * reports and summaries read back, the sandbox's request log filtered, and `node dist/bin.js` spawned.
 */
import { parse } from "csv-parse/sync"
import { Effect, type Layer } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import type { Api } from "../../src/client/Api.js"
import type { ImportServices } from "../../src/import/Services.js"
import { type OnboardRequest, prepareOnboarding, runOnboarding } from "../../src/onboard/Onboard.js"
import type { ResourceName } from "../../src/Resources.js"
import type { RequestLogEntry, RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { spawnCli } from "../import/support.js"
import { temporaryDir, testClientLayer } from "../support.js"

export const root = fileURLToPath(new URL("../..", import.meta.url))
export const bin = Path.join(root, "dist/bin.js")
export const exampleWorkbook = Path.join(root, "templates/example-onboarding.xlsx")
export const exampleCsvDir = Path.join(root, "templates/example")

/** The steps of the example onboarding that write records of their own (compared with the server, then undone). */
export const recordSteps: ReadonlyArray<ResourceName> = [
  "segments",
  "keywords",
  "expense-types",
  "product-categories",
  "equipment-categories",
  "users",
  "teams",
  "customer-groups",
  "customers",
  "equipments",
  "products",
  "services",
  "tasks",
  "additional-costs"
]

export const startTestSandbox = (options: SandboxOptionsInput = {}) =>
  startSandbox({ port: 0, rate: { limit: 20_000, windowMs: 1_000 }, answerDelayMs: 300, ...options })

/** The real client of `sandbox`'s first account, with fast backoff. */
export const apiOf = (sandbox: RunningSandbox): Layer.Layer<Api | ImportServices> => testClientLayer(sandbox)

export const tempDir = temporaryDir("fsm-onboard-")

/** Writes `content` at `dir/name`; returns the path. */
export const put = (dir: string, name: string, content: string | Uint8Array): string => {
  const path = Path.join(dir, name)
  writeFileSync(path, content)
  return path
}

/** An onboarding request with the defaults a test does not care about. */
export const request = (
  fields: Pick<OnboardRequest, "input" | "runDir"> & Partial<OnboardRequest>
): OnboardRequest => ({
  command: "onboard",
  dryRun: false,
  verify: false,
  answerWaitMs: 20_000,
  answerPollMs: 100,
  read: { encoding: "auto", delimiter: "auto" },
  dateFormat: "auto",
  decimal: "auto",
  ...fields
})

/** Prepares and runs an onboarding against `sandbox`. */
export const onboardInto = (sandbox: RunningSandbox, fields: Parameters<typeof request>[0]) =>
  Effect.flatMap(prepareOnboarding(request(fields)), (prepared) => runOnboarding(prepared)).pipe(
    Effect.provide(apiOf(sandbox))
  )

export type ReportRow = Record<string, string>

export const readReport = (runDir: string): ReadonlyArray<ReportRow> =>
  parse(readFileSync(Path.join(runDir, "report.csv")), {
    columns: true,
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true
  }) as Array<ReportRow>

export const readJson = (path: string): Record<string, any> => JSON.parse(readFileSync(path, "utf8"))

/** `row:status` of each report line. */
export const statuses = (rows: ReadonlyArray<ReportRow>) => rows.map((r) => `${r._row}:${r._status}`)

/** Writes the sandbox received (POST, PUT, PATCH, DELETE), logins left out. */
export const writes = (log: ReadonlyArray<RequestLogEntry>) =>
  log.filter((e) => e.method !== "GET" && !/\/login$/i.test(e.path))

/** GETs of a collection's list (not of one record by id). */
export const listCalls = (log: ReadonlyArray<RequestLogEntry>, collection: string) =>
  log.filter((e) => e.method === "GET" && new RegExp(`/v2/${collection}/?$`, "i").test(e.path))

/** Runs `node dist/bin.js …args` to its end (credentials for `sandbox` in the environment when given, then `env`). */
export const runCli = (
  args: ReadonlyArray<string>,
  cwd: string,
  sandbox?: RunningSandbox,
  env: Record<string, string> = {}
) =>
  Effect.promise(async () => {
    const cli = spawnCli(args, sandbox, cwd, env)
    const { code } = await cli.exit
    return { code, stdout: cli.stdout(), stderr: cli.stderr() }
  })

// --- a family of records with a failing parent ----------------------------------------------------------------

/**
 * A small account whose customers include an invalid row (bad CPF) and a failing one (unknown segment), as CSVs
 * in `DIR/input`; returns that directory.
 */
export const writeFamily = (dir: string): string => {
  dir = Path.join(dir, "input")
  mkdirSync(dir)
  put(dir, "users.csv", "externalId,name,login,password\nU-1,Ana Souza,ana.souza,Troque@2026\n")
  put(
    dir,
    "customers.csv",
    [
      "externalId,name,cpfCnpj,segmentDescription",
      "C-1,Padaria Boa,11.222.333/0001-81,",
      "C-2,CPF errado,123.456.789-00,",
      "C-3,Segmento ausente,,Inexistente",
      "C-4,Sem filhos,,"
    ].join("\n") + "\n"
  )
  put(
    dir,
    "equipments.csv",
    [
      "externalId,name,associatedCustomerExternalId,parentEquipmentExternalId",
      "E-1,Split 1,C-1,",
      "E-2,Split 2,C-2,",
      "E-3,Split 3,C-3,",
      "E-4,Avulso,,",
      "E-5,Evaporadora,C-1,E-6",
      "E-6,Condensadora,C-1,",
      "E-7,Filho do E-2,,E-2"
    ].join("\n") + "\n"
  )
  put(
    dir,
    "tasks.csv",
    [
      "externalId,userFromLogin,customerExternalId,taskDate,equipmentsExternalId",
      "T-1,ana.souza,C-1,2026-12-01T09:00:00,E-1|E-5",
      "T-2,ana.souza,C-2,2026-12-01T10:00:00,",
      "T-3,ana.souza,C-1,2026-12-01T11:00:00,E-1|E-2",
      "T-4,ana.souza,,2026-12-02T09:00:00,E-4"
    ].join("\n") + "\n"
  )
  put(dir, "additional-costs.csv", "name,value\nDeslocamento,35.00\n")
  put(
    dir,
    "task-additional-costs.csv",
    "taskExternalId,additionalCostName,value\nT-1,Deslocamento,35.00\nT-2,Deslocamento,35.00\nT-3,Deslocamento,35.00\nT-4,Deslocamento,35.00\n"
  )
  return dir
}

/** `_row` → `_error` of the report lines that have one. */
export const errors = (rows: ReadonlyArray<Record<string, string>>) =>
  Object.fromEntries(rows.filter((r) => r._error !== "").map((r) => [r._row, r._error]))
