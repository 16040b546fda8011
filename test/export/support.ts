/**
 * Helpers of the export tests: a sandbox on a free loopback port, an account seeded through the real HTTP API
 * with every main resource (fetch, as a user's other tools would), a client of it, CSV files read back as cells,
 * and `node dist/bin.js` spawned for exit codes and interruptions.
 */
import { assert } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Api } from "../../src/client/Api.js"
import type { ClientSettingsInput } from "../../src/client/Config.js"
import type { ExportRequest } from "../../src/export/Export.js"
import { prepareExport, runExport } from "../../src/export/Export.js"
import type { ExportFormat } from "../../src/export/Manifest.js"
import type { RunningSandbox, SandboxOptionsInput } from "../../src/sandbox/Sandbox.js"
import { startSandbox } from "../../src/sandbox/Sandbox.js"
import { temporaryDir, testClient } from "../support.js"

export const root = fileURLToPath(new URL("../..", import.meta.url))
/** The built CLI; FSM_DRILL_BIN points the export tests at another build (the code before a change, to compare). */
export const bin = process.env.FSM_DRILL_BIN ?? Path.join(root, "dist/bin.js")

// Keys that no temporary directory's name can contain: a key is a secret, and every secret is redacted from what is printed.
export const accountA = { apiKey: "key-of-a", apiToken: "token-a" }
export const accountB = { apiKey: "key-of-b", apiToken: "token-b" }

/** A sandbox with two isolated accounts and a budget that never gets in the way of a test. */
export const startTestSandbox = (options: SandboxOptionsInput = {}) =>
  startSandbox({
    port: 0,
    accounts: [accountA, accountB],
    rate: { limit: 20_000, windowMs: 1_000 },
    answerDelayMs: 0,
    ...options
  })

/** A temporary directory removed with the test's scope. */
export const tempDir = temporaryDir("fsm-export-")

/** The export's client of one account of `sandbox`, with fast backoff. */
export const apiOf = (
  sandbox: RunningSandbox,
  account: { readonly apiKey: string; readonly apiToken: string },
  overrides: Partial<ClientSettingsInput> = {}
) => testClient(sandbox, { credentials: account, ...overrides })

/**
 * An export of every resource of `sandbox`'s first account into `out`, as `export --out OUT` makes it (`extra`: the
 * request's other options, `--redact` say).
 */
export const exportAll = (
  sandbox: RunningSandbox,
  out: string,
  format: ExportFormat = "csv",
  extra: Partial<ExportRequest> = {}
) =>
  Effect.gen(function*() {
    const api = yield* apiOf(sandbox, sandbox.accounts[0]!)
    const prepared = yield* prepareExport({
      resources: [],
      out,
      format,
      since: undefined,
      until: undefined,
      say: () => Effect.void,
      ...extra
    })
    return yield* runExport(prepared).pipe(Effect.provideService(Api, api))
  })

/** What two exports of one account must share: every file byte for byte; the manifest but its times and address. */
export const assertSameExport = (a: string, b: string) => {
  const files = readdirSync(a).sort()
  assert.deepStrictEqual(readdirSync(b).sort(), files)
  for (const file of files) {
    if (file === "manifest.json") continue
    assert.strictEqual(readFileSync(Path.join(b, file), "utf8"), readFileSync(Path.join(a, file), "utf8"), file)
  }
  const manifest = (dir: string) => {
    const { baseUrl: _b, finished: _f, started: _s, ...rest } = JSON.parse(
      readFileSync(Path.join(dir, "manifest.json"), "utf8")
    )
    return rest
  }
  assert.deepStrictEqual(manifest(b), manifest(a))
}

// --- seeding over HTTP -------------------------------------------------------------------------------------------

export interface Http {
  readonly send: (method: string, path: string, body?: unknown) => Promise<any>
}

/** A logged-in fetch client of one account; any non-2xx answer fails the test with the server's message. */
export const http = async (
  sandbox: RunningSandbox,
  account: { readonly apiKey: string; readonly apiToken: string }
): Promise<Http> => {
  const login = await fetch(`${sandbox.url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(account)
  })
  const token = ((await login.json()) as any).result.accessToken as string
  return {
    send: async (method, path, body) => {
      const res = await fetch(`${sandbox.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { "content-type": "application/json" } : {})
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
      })
      const text = await res.text()
      if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${text}`)
      return text === "" ? undefined : (JSON.parse(text) as any).result
    }
  }
}

export const hyperlink = "=HYPERLINK(\"http://x\",\"y\")"

/**
 * Every main resource of an account, with the values whose read-back differs from the write (customers' name,
 * users' and tasks' ids, products' code, money, webhooks' url, unset dates), references between records, a
 * self-reference (a parent equipment), task sub-collections and questionnaire answers, and a deleted task.
 */
/** A test sandbox with every resource seeded (`seedEverything`) in account A. */
export const seededSandbox = Effect.flatMap(
  startTestSandbox(),
  (sandbox) => Effect.as(Effect.promise(() => seedEverything(sandbox)), sandbox)
)

export const seedEverything = async (sandbox: RunningSandbox, account = accountA) => {
  const api = await http(sandbox, account)
  const post = (path: string, body: unknown) => api.send("POST", path, body)
  const segment = await post("/segments", { description: "Supermercados" })
  await post("/segments", { description: "Hospitais" })
  const urgent = await post("/keywords", { description: "Urgente" })
  const warranty = await post("/keywords", { description: "Garantia" })
  const fuel = await post("/expensetypes", { description: "Combustível" })
  const filters = await post("/productcategories", { externalId: "CAT-FILTROS", description: "Filtros" })
  const split = await post("/equipmentcategories", { externalId: "EQC-SPLIT", description: "Ar-condicionado split" })
  const ana = await post("/users", {
    externalId: "USR-001",
    name: "Ana Souza",
    login: "ana.souza",
    password: "Troque@2026",
    email: "ana@example.com.br",
    userType: 3,
    workDaysOfWeek: [2, 3, 4, 5, 6],
    startWorkHour: "08:00:00",
    endWorkHour: "18:00:00",
    hourValue: 85.5,
    gpsFrequency: 120
  })
  const bruno = await post("/users", {
    externalId: "USR-002",
    name: "Bruno Almeida",
    login: "bruno.almeida",
    password: "Troque@2026",
    userType: 1
  })
  const team = await post("/teams", {
    description: "Equipe Zona Sul",
    participants: [ana.userID, bruno.userID],
    managers: [ana.userID]
  })
  const group = await post("/customergroups", { description: "Redes de varejo" })
  const padaria = await post("/customers", {
    externalId: "CLI-0001",
    name: "Padaria Pão Quente",
    legalName: "Pão Quente Ltda",
    cpfCnpj: "11.222.333/0001-81",
    phoneNumber: ["+55 11 3333-4444", "+55 11 98888-7777"],
    email: ["contato@paoquente.com.br"],
    address: "Av. Paulista, 1000",
    latitude: -23.5614,
    longitude: -46.6559,
    groupsId: [group.id],
    managerTeamsId: [team.id],
    managersId: [bruno.userID],
    segmentId: segment.id,
    active: true,
    contacts: [{
      name: "Carlos Lima",
      jobPosition: "Gerente",
      email: "carlos@paoquente.com.br",
      phone: "+55 11 99999-0000"
    }]
  })
  const evil = await post("/customers", { externalId: "CLI-0002", name: hyperlink, note: "-12,5", active: false })
  await post("/customers", { externalId: "CLI-0003", name: "Hospital Santa Luzia", groupsId: [group.id] })
  const unit = await post("/equipments", {
    externalId: "EQP-0001",
    name: "Condensadora",
    associatedCustomerId: padaria.id,
    associatedUserId: bruno.userID,
    categoryId: split.id,
    equipmentSpecifications: [{ name: "Capacidade", specification: "60000 BTU" }],
    warrantyStartDate: "2025-01-15",
    warrantyEndDate: "2027-01-15"
  })
  const child = await post("/equipments", {
    externalId: "EQP-0002",
    name: "Evaporadora",
    parentEquipmentId: unit.id,
    associatedCustomerId: padaria.id
  })
  const filter = await post("/products", {
    externalId: "PRD-01",
    name: "Filtro de ar",
    categoryId: filters.id,
    unitaryValue: 1234.56,
    unitaryCost: 22,
    minimumStock: 5,
    totalStock: 40,
    active: true,
    associatedEquipmentId: unit.id
  })
  await post("/products", { externalId: "PRD-02", name: "Gás R410A", unitaryValue: 12 })
  const cleaning = await post("/services", {
    externalCode: "SRV-LIMPEZA",
    title: "Limpeza de split",
    price: 180.5,
    active: true
  })
  const travel = await post("/additionalcosts", { name: "Deslocamento", value: 35 })
  const task = await post("/tasks", {
    externalId: "OS-0001",
    idUserFrom: ana.userID,
    idUserTo: bruno.userID,
    teamId: team.id,
    customerId: padaria.id,
    taskType: 1,
    taskDate: "2026-03-01T09:00:00",
    priority: 3,
    orientation: "Levar escada",
    equipmentsId: [unit.id, child.id],
    keyWords: [urgent.id, warranty.id],
    checkinType: 1
  })
  await post("/tasks", {
    externalId: "OS-0002",
    idUserFrom: ana.userID,
    customerId: evil.id,
    taskDate: "2019-07-10T14:30:00"
  })
  const doomed = await post("/tasks", {
    externalId: "OS-0003",
    idUserFrom: ana.userID,
    taskDate: "2025-05-05T08:00:00"
  })
  await api.send("DELETE", `/tasks/${doomed.taskID}`)
  await api.send("PUT", `/tasks/${task.taskID}/products`, {
    taskProducts: [{
      ProductId: filter.productId,
      Quantity: "2",
      Value: "49.9",
      DiscountType: "1",
      DiscountValue: "10"
    }]
  })
  await api.send("PUT", `/tasks/${task.taskID}/services`, {
    taskServices: [{ ServiceId: cleaning.id, Quantity: "1", Value: "180" }]
  })
  await api.send("PUT", `/tasks/${task.taskID}/additional-costs`, {
    taskAdditionalCosts: [{ AdditionalCostId: String(travel.id), Value: "35" }]
  })
  await api.send("PUT", `/tasks/${task.taskID}/questionnaire-response`, {
    itemID: "1",
    codigoChecklist: "CHK-PREV",
    codigoPergunta: "P1",
    resposta: "Sim"
  })
  await api.send("PUT", `/tasks/${task.taskID}/questionnaire-response`, {
    itemID: "1",
    codigoChecklist: "CHK-PREV",
    codigoPergunta: "P2",
    resposta: "Filtro sujo",
    codigoEquipamento: unit.id
  })
  await post("/expenses", {
    description: "Almoço",
    userToId: bruno.userID,
    typeId: fuel.id,
    date: "2026-02-10",
    amount: 42.5
  })
  await post("/tickets", {
    title: "Pingando",
    priority: 2,
    requesterEmail: "carlos@paoquente.com.br",
    requestTypeId: 1,
    customerId: padaria.id,
    teamId: team.id,
    userResponsableId: bruno.userID,
    equipmentId: unit.id
  })
  await post("/receivables", {
    customerId: padaria.id,
    value: 350,
    dueDate: "2026-12-10",
    description: "Contrato",
    paid: false
  })
  await post("/serviceorders", {
    externalId: "SO-0001",
    customerId: padaria.id,
    statusId: 1,
    description: "Preventiva",
    taskTypeId: 1,
    priority: 2
  })
  await post("/webhooks", { entity: 4, action: 1, targetUrl: "https://example.com.br/hooks/fsm", active: true })
  return { task, padaria, unit, child, filter }
}

/** Runs `make(i)` for i in 0 … n−1, fifty requests at a time. */
const inBatches = async (n: number, make: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => make(i + j)))
}

/** A few thousand records: two segments, one user, `customers` customers and `tasks` tasks spread over seven years. */
export const seedBulk = async (
  sandbox: RunningSandbox,
  counts: { readonly customers: number; readonly tasks: number },
  account = accountA
) => {
  const api = await http(sandbox, account)
  await api.send("POST", "/segments", { description: "Supermercados" })
  await api.send("POST", "/segments", { description: "Hospitais" })
  const user = await api.send("POST", "/users", {
    externalId: "USR-001",
    login: "ana.souza",
    name: "Ana Souza",
    password: "Troque@2026"
  })
  await inBatches(
    counts.customers,
    (i) =>
      api.send("POST", "/customers", {
        externalId: `BULK-${String(i).padStart(5, "0")}`,
        name: `Cliente ${i}`,
        note: i % 7 === 0 ? "=1+1" : ""
      })
  )
  await inBatches(counts.tasks, (i) =>
    api.send("POST", "/tasks", {
      externalId: `OS-${String(i).padStart(5, "0")}`,
      idUserFrom: user.userID,
      customerId: 1 + (i % Math.max(1, counts.customers)),
      taskDate: new Date(Date.UTC(2020, 0, 1) + i * 2 * 86_400_000 + (i % 24) * 3_600_000).toISOString().slice(0, 19)
    }))
}

/** The day of 2026 of task `i` of `n` spread evenly over the year. */
export const dayOfYear = (i: number, n: number) =>
  new Date(Date.UTC(2026, 0, 1 + Math.floor((i * 365) / n))).toISOString().slice(0, 10)

/** One user and `n` tasks (`OS-0` …) spread evenly over 2026, one after another; the seeding client is returned. */
export const seedTasksOfYear = async (sandbox: RunningSandbox, n: number, account = accountA) => {
  const seeding = await http(sandbox, account)
  const user = await seeding.send("POST", "/users", { login: "ana", name: "Ana" })
  for (let i = 0; i < n; i++) {
    await seeding.send("POST", "/tasks", {
      externalId: `OS-${i}`,
      idUserFrom: user.userID,
      taskDate: `${dayOfYear(i, n)}T09:00:00`
    })
  }
  return seeding
}

/** A CSV file as rows of cells, header first. */
export const csvCells = (file: string) =>
  parse(readFileSync(file), { bom: true, delimiter: ",", relax_column_count: true }) as Array<Array<string>>

// --- files ---------------------------------------------------------------------------------------------------

export interface Table {
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Record<string, string>>
}

/** A CSV export file as records of raw cells (the guard's `'` still on). */
export const readCsv = (file: string): Table => {
  const text = readFileSync(file, "utf8")
  if (!text.startsWith("\uFEFF")) throw new Error(`${file} does not start with a UTF-8 BOM`)
  const [header, ...rows] = parse(text.slice(1), { relax_column_count: false }) as Array<Array<string>>
  return { header: header!, rows: rows.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i]!]))) }
}

// --- the CLI -------------------------------------------------------------------------------------------------

export interface CliRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** `node dist/bin.js …` with the given environment added; `onSpawn` gets the child (to kill it). */
export const runCli = (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  onSpawn?: (child: ReturnType<typeof spawn>) => void
) =>
  new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += String(d)))
    child.stderr.on("data", (d) => (stderr += String(d)))
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    onSpawn?.(child)
  })

/** The environment that points the CLI at one account of a sandbox. */
export const cliEnv = (sandbox: RunningSandbox, account: { readonly apiKey: string; readonly apiToken: string }) => ({
  FSM_BASE_URL: sandbox.url,
  FSM_API_KEY: account.apiKey,
  FSM_API_TOKEN: account.apiToken,
  FSM_RATE: "20000/1s"
})
