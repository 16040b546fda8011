/**
 * `fsm-bulk evidence RUN_DIR --out FILE.zip`: what an auditor needs about one run, in one file. `README.txt` and
 * `index.json` first (the run, its input's sha256, the profile, the plan and its approver, the signer's key, and
 * every file's sha256), then the run directory's journal(s), reports, summary and signature. The input itself only
 * with `--with-input` (it holds customer data). Nothing shaped like a credential goes in: a file holding one stops
 * the bundle, naming the file and line.
 *
 * The zip is written here with node:zlib (deflate, data descriptors, UTF-8 names), streamed file by file, to a
 * temporary file renamed into place at the end.
 */
import { parse } from "csv-parse"
import * as Effect from "effect/Effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as Path from "node:path"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import { crc32, createDeflateRaw } from "node:zlib"
import { RunError, UsageError } from "../Errors.js"
import { csvBom, csvRecord } from "../files/Write.js"
import { isResourceName, resource } from "../Resources.js"
import { redactKnown, registerSecret } from "../Secrets.js"
import { version } from "../Version.js"
import { fileLines } from "./Chain.js"
import { runFiles, runSignature, type Withheld, withheldFile } from "./Seal.js"

interface EvidenceOptions {
  readonly runDir: string
  readonly out: string
  readonly withInput: boolean
  readonly publicKey: string | undefined
}

interface Member {
  /** Name inside the zip. */
  readonly name: string
  /** File on disk, or the content itself. */
  readonly source: string | Buffer
  readonly what: string
}

const readJson = (file: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(fs.readFileSync(file, "utf8"))
    return typeof value === "object" && value !== null ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

const firstLine = async (file: string): Promise<Record<string, unknown> | undefined> => {
  for await (const line of fileLines(file)) {
    try {
      return JSON.parse(line.toString("utf8")) as Record<string, unknown>
    } catch {
      return undefined
    }
  }
  return undefined
}

const sha256Of = async (source: string | Buffer): Promise<{ sha256: string; bytes: number }> => {
  const hash = crypto.createHash("sha256")
  let bytes = 0
  if (typeof source !== "string") return { sha256: hash.update(source).digest("hex"), bytes: source.length }
  for await (const chunk of fs.createReadStream(source) as AsyncIterable<Buffer>) {
    hash.update(chunk)
    bytes += chunk.length
  }
  return { sha256: hash.digest("hex"), bytes }
}

// Credentials as this tool and its API spell them; customer data never has these shapes.
const credentialShapes: ReadonlyArray<RegExp> = [
  /\bBearer\s+(?!\[redacted\])[A-Za-z0-9\-._~+/]{8,}/i,
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/,
  /"(?:apiToken|apiKey|accessToken|access_token|refresh_token)"\s*:\s*"(?!\[redacted\])[^"]{6,}"/i
]

/** The first line of a text file that holds a known secret or a credential's shape (xlsx: a zip, not read). */
const secretIn = async (file: string): Promise<number | undefined> => {
  if (!/\.(ndjson|json|csv|txt|sig|pub|html)$/.test(file)) return undefined
  let n = 0
  for await (const line of fileLines(file)) {
    n += 1
    const text = line.toString("utf8")
    if (redactKnown(text) !== text || credentialShapes.some((shape) => shape.test(text))) return n
  }
  return undefined
}

// --- the zip -----------------------------------------------------------------------------------------------------

const dosStamp = (date: Date) => ({
  time: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
  date: ((date.getFullYear() - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate()
})

const writeZip = async (out: string, members: ReadonlyArray<Member>) => {
  const stream = fs.createWriteStream(out, { flags: "wx", mode: 0o600 })
  const opened = new Promise<void>((resolve, reject) => stream.once("open", () => resolve()).once("error", reject))
  await opened
  let offset = 0
  const put = (data: Buffer) =>
    new Promise<void>((resolve, reject) => {
      offset += data.length
      stream.write(data, (error) => (error ? reject(error) : resolve()))
    })
  const stamp = dosStamp(new Date())
  const central: Array<Buffer> = []
  for (const member of members) {
    const name = Buffer.from(member.name, "utf8")
    const at = offset
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(0x0808, 6) // sizes in a data descriptor; UTF-8 names
    local.writeUInt16LE(8, 8) // deflate
    local.writeUInt16LE(stamp.time, 10)
    local.writeUInt16LE(stamp.date, 12)
    local.writeUInt16LE(name.length, 26)
    await put(Buffer.concat([local, name]))
    let crc = 0
    let size = 0
    let compressed = 0
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        crc = crc32(chunk, crc)
        size += chunk.length
        done(null, chunk)
      }
    })
    const input = typeof member.source === "string"
      ? fs.createReadStream(member.source)
      : (async function*() {
        yield member.source as Buffer
      })()
    await pipeline(input, count, createDeflateRaw({ level: 6 }), async function(deflated: AsyncIterable<Buffer>) {
      for await (const chunk of deflated) {
        compressed += chunk.length
        await put(chunk)
      }
    })
    if (size >= 0xffffffff || offset >= 0xffffffff) throw new Error("the bundle would pass 4 GiB (no ZIP64)")
    const descriptor = Buffer.alloc(16)
    descriptor.writeUInt32LE(0x08074b50, 0)
    descriptor.writeUInt32LE(crc, 4)
    descriptor.writeUInt32LE(compressed, 8)
    descriptor.writeUInt32LE(size, 12)
    await put(descriptor)
    const entry = Buffer.alloc(46)
    entry.writeUInt32LE(0x02014b50, 0)
    entry.writeUInt16LE(0x0314, 4) // made by: Unix, 2.0
    entry.writeUInt16LE(20, 6)
    entry.writeUInt16LE(0x0808, 8)
    entry.writeUInt16LE(8, 10)
    entry.writeUInt16LE(stamp.time, 12)
    entry.writeUInt16LE(stamp.date, 14)
    entry.writeUInt32LE(crc, 16)
    entry.writeUInt32LE(compressed, 20)
    entry.writeUInt32LE(size, 24)
    entry.writeUInt16LE(name.length, 28)
    entry.writeUInt32LE((0o100644 << 16) >>> 0, 38)
    entry.writeUInt32LE(at, 42)
    central.push(Buffer.concat([entry, name]))
  }
  const directory = Buffer.concat(central)
  const start = offset
  await put(directory)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(central.length, 8)
  end.writeUInt16LE(central.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(start, 16)
  await put(end)
  await new Promise<void>((resolve, reject) => {
    stream.end(() => resolve())
    stream.once("error", reject)
  })
  const handle = await fs.promises.open(out, "r")
  await handle.sync().finally(() => handle.close())
}

// --- secrets of the records ---------------------------------------------------------------------------------------

/** The columns of a run's resource the server keeps but never shows (users' passwords): secrets in a report. */
const secretColumns = (runDir: string): ReadonlyArray<string> => {
  const name = readJson(Path.join(runDir, "summary.json"))?.resource
  if (typeof name !== "string" || !isResourceName(name)) return []
  return resource(name).fields.filter((f) => f.createOnly === true && f.writeOnly === true).map((f) => f.name)
}

/**
 * A copy of `report` with the cells of `columns` replaced by `[redacted]`, streamed to `out`; false (and no copy)
 * when no such cell has a value.
 */
const redactReport = async (report: string, columns: ReadonlyArray<string>, out: string): Promise<boolean> => {
  const rows = fs.createReadStream(report).pipe(parse({ bom: true, relax_column_count: true }))
  const file = fs.createWriteStream(out, { mode: 0o600 })
  let positions: Array<number> | undefined
  let found = false
  for await (const row of rows as AsyncIterable<Array<string>>) {
    if (positions === undefined) {
      positions = columns.map((c) => row.indexOf(c)).filter((i) => i >= 0)
      if (positions.length === 0) break
      file.write(`${csvBom}${csvRecord(row, { guard: false })}`)
      continue
    }
    const cells = [...row]
    for (const i of positions) {
      if ((cells[i] ?? "") !== "") {
        cells[i] = "[redacted]"
        found = true
      }
    }
    if (!file.write(csvRecord(cells, { guard: false }))) await new Promise<void>((r) => file.once("drain", () => r()))
  }
  await new Promise<void>((resolve, reject) => file.end(() => resolve()).once("error", reject))
  if (!found) fs.rmSync(out, { force: true })
  return found
}

// --- what goes in ----------------------------------------------------------------------------------------------

const describeRunFile = (file: string): string => {
  const base = Path.basename(file)
  return base === "journal.ndjson"
    ? "the journal: every row's state change, each line carrying the sha256 of the line before it"
    : base === "report.csv" || base === "report.xlsx"
    ? "the report: one line per input row with its status"
    : base === "summary.json"
    ? "the run's summary: counts, times, exit code"
    : base === runSignature
    ? "the signature (Ed25519) over the sha256 of every file of the run and the journal's last chain hash"
    : "a file the run wrote"
}

export const writeEvidence = Effect.fn("Evidence.write")(function*(options: EvidenceOptions) {
  const dir = options.runDir
  if (!fs.existsSync(Path.join(dir, "summary.json"))) {
    return yield* new UsageError({ message: `${dir} holds no summary.json: not a finished run directory` })
  }
  if (fs.existsSync(options.out)) {
    return yield* new UsageError({ message: `${options.out} already exists: the bundle is never written over a file` })
  }
  for (const name of ["FSM_API_KEY", "FSM_API_TOKEN", "FSM_FLEET_KEY"]) registerSecret(process.env[name])
  return yield* Effect.tryPromise({
    try: () => bundle(options),
    catch: (cause) =>
      cause instanceof UsageError || cause instanceof RunError
        ? cause
        : new RunError({ message: `cannot write the evidence ${options.out}: ${(cause as Error).message}`, cause })
  })
})

const bundle = async (options: EvidenceOptions) => {
  const scratch = fs.mkdtempSync(Path.join(os.tmpdir(), "fsm-evidence-"))
  try {
    return await bundleWith(options, scratch)
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

const bundleWith = async (options: EvidenceOptions, scratch: string) => {
  const dir = options.runDir
  const summary = readJson(Path.join(dir, "summary.json")) ?? {}
  const notes: Array<string> = []
  const names = [...runFiles(dir), ...(fs.existsSync(Path.join(dir, runSignature)) ? [runSignature] : [])]
  // The inputs, as the journals' headers recorded them (one per step of an onboarding).
  const inputs = new Map<string, { file: string; sha256: string }>()
  let profile: unknown = undefined
  for (const file of names.filter((n) => Path.basename(n) === "journal.ndjson")) {
    const header = await firstLine(Path.join(dir, file))
    const source = header?.source as { file?: unknown; sha256?: unknown } | undefined
    if (typeof source?.file === "string" && typeof source.sha256 === "string") {
      inputs.set(source.sha256, { file: source.file, sha256: source.sha256 })
    }
    profile ??= (header?.read as { map?: unknown } | undefined)?.map
  }
  const inputShas = new Set(inputs.keys())
  const members: Array<Member> = []
  // Reports that hold secrets of the records are withheld, a redacted copy in their place (Seal.ts reads the list).
  const withheld: Array<Withheld["withheld"][number]> = []
  for (const file of names.filter((n) => Path.basename(n) === "report.csv")) {
    const rel = Path.dirname(file)
    const columns = secretColumns(Path.join(dir, rel))
    const copy = Path.join(scratch, `${withheld.length}.csv`)
    if (columns.length === 0 || !(await redactReport(Path.join(dir, file), columns, copy))) continue
    const copyName = rel === "." ? "report.redacted.csv" : `${rel}/report.redacted.csv`
    const why = `its ${columns.join(", ")} column holds what the server never shows`
    withheld.push({ file, sha256: (await sha256Of(Path.join(dir, file))).sha256, why, copy: copyName })
    const xlsx = rel === "." ? "report.xlsx" : `${rel}/report.xlsx`
    if (names.includes(xlsx)) withheld.push({ file: xlsx, sha256: (await sha256Of(Path.join(dir, xlsx))).sha256, why })
    members.push({
      name: `run/${copyName}`,
      source: copy,
      what: `report.csv with its ${columns.join(", ")} cells redacted`
    })
    notes.push(
      `${file}${
        names.includes(xlsx) ? ` and ${xlsx}` : ""
      } withheld (${why}): run/${copyName} is a redacted copy; their sha256 are in run/${withheldFile}`
    )
  }
  for (const file of names) {
    if (withheld.some((w) => w.file === file)) continue
    const path = Path.join(dir, file)
    const line = await secretIn(path)
    if (line !== undefined) {
      throw new RunError({
        message: `${path}: line ${line} holds a credential (or text shaped like one): no bundle was written`
      })
    }
    // A copy of the input inside the run directory (a fleet job's source/) goes in only with --with-input.
    if (!options.withInput && inputShas.has((await sha256Of(path)).sha256)) continue
    members.push({ name: `run/${file}`, source: path, what: describeRunFile(file) })
  }
  if (withheld.length > 0) {
    members.push({
      name: `run/${withheldFile}`,
      source: Buffer.from(`${JSON.stringify({ withheld } satisfies Withheld, null, 2)}\n`),
      what: "the reports left out (they hold secrets of the records), with the sha256 the signature covers"
    })
  }
  if (profile !== undefined) {
    members.push({
      name: "mapping-profile.json",
      source: Buffer.from(`${JSON.stringify(profile, null, 2)}\n`),
      what: "the mapping profile the run read its input through (file, sha256 and content)"
    })
  }
  const plan = summary.plan as { file?: unknown } | string | undefined
  const planFile = typeof plan === "string" ? plan : typeof plan?.file === "string" ? plan.file : undefined
  if (planFile !== undefined && fs.existsSync(planFile)) {
    members.push({ name: `plan/${Path.basename(planFile)}`, source: planFile, what: "the plan the run applied" })
  } else if (plan !== undefined) {
    notes.push("the run names a plan whose file is not found: only its record is in index.json")
  }
  const signature = readJson(Path.join(dir, runSignature))
  const publicKey = options.publicKey !== undefined
    ? fs.readFileSync(options.publicKey)
    : typeof signature?.publicKey === "string"
    ? Buffer.from(signature.publicKey)
    : undefined
  if (publicKey !== undefined) {
    members.push({
      name: "signing.pub",
      source: publicKey,
      what: options.publicKey !== undefined
        ? "the signer's public key, as given with --public-key"
        : "the public key inside summary.sig (who claims to have signed: compare it with the one the signer gave you)"
    })
  } else notes.push("the run is unsigned: the bundle carries no signature")
  if (options.withInput) {
    for (const input of inputs.values()) {
      if (!fs.existsSync(input.file)) {
        notes.push(`the input ${input.file} is gone: only its sha256 is in the bundle`)
        continue
      }
      const now = await sha256Of(input.file)
      if (now.sha256 !== input.sha256) {
        notes.push(`the input ${input.file} changed since the run: not included (the run read sha256 ${input.sha256})`)
        continue
      }
      members.push({
        name: `input/${Path.basename(input.file)}`,
        source: input.file,
        what: "the input file the run read"
      })
    }
  }
  const listed = await Promise.all(
    members.map(async (m) => ({ name: m.name, what: m.what, ...(await sha256Of(m.source)) }))
  )
  const index = {
    tool: "fsm-bulk",
    version,
    created: new Date().toISOString(),
    run: {
      dir: Path.resolve(dir),
      command: summary.command,
      resource: summary.resource,
      mode: summary.mode,
      started: summary.started,
      finished: summary.finished,
      dryRun: summary.dryRun,
      exitCode: summary.exitCode,
      counts: summary.counts
    },
    inputs: [...inputs.values()].map((i) => ({
      file: Path.basename(i.file),
      sha256: i.sha256,
      included: listed.some((m) => m.name === `input/${Path.basename(i.file)}`)
    })),
    plan: summary.plan ?? null,
    approvedBy: summary.approvedBy ?? null,
    signature: signature === undefined ? null : { algorithm: signature.algorithm, keyId: signature.keyId },
    files: listed
  }
  const readme = [
    `Evidence of an fsm-bulk run (${String(summary.command ?? "run")} ${
      String(summary.resource ?? "")
    }), bundled ${index.created}`,
    "",
    `Run: started ${String(summary.started)}, finished ${String(summary.finished)}, exit code ${
      String(summary.exitCode)
    }${summary.dryRun === true ? " (a dry run: nothing was written)" : ""}.`,
    ...index.inputs.map((i) =>
      `Input: ${i.file}, sha256 ${i.sha256}${i.included ? " (in input/)" : " (not included: it holds customer data)"}`
    ),
    `Plan: ${index.plan === null ? "none" : JSON.stringify(index.plan)}; approved by: ${
      String(index.approvedBy ?? "nobody recorded")
    }`,
    `Signature: ${
      index.signature === null ? "none (the run was not signed)" : `Ed25519, key ${String(index.signature.keyId)}`
    }`,
    "",
    "How to check it:",
    "1. Every file's sha256 is in index.json (sha256sum -c works on the list below).",
    "2. Unzip, then run: fsm-bulk verify run --public-key SIGNER.pub",
    "   It walks the journal's hash chain (a removed, edited or moved line breaks it) and checks summary.sig",
    "   (the sha256 of every file of the run and the journal's last line: a cut tail shows) with the signer's key.",
    "   Use the public key the signer gave you, not only signing.pub from this bundle: anyone can sign with a key of their own.",
    "",
    "Files:",
    ...listed.map((m) => `${m.sha256}  ${m.name}\n    ${m.what}`),
    ...(notes.length > 0 ? ["", "Notes:", ...notes] : []),
    ""
  ].join("\n")
  const readmeBytes = Buffer.from(readme, "utf8")
  const indexBytes = Buffer.from(
    `${
      JSON.stringify(
        { ...index, files: [{ name: "README.txt", what: "read first", ...(await sha256Of(readmeBytes)) }, ...listed] },
        null,
        2
      )
    }\n`,
    "utf8"
  )
  const tmp = `${options.out}.${process.pid}.tmp`
  try {
    await writeZip(tmp, [
      { name: "README.txt", source: readmeBytes, what: "" },
      { name: "index.json", source: indexBytes, what: "" },
      ...members
    ])
    fs.renameSync(tmp, options.out)
  } catch (error) {
    fs.rmSync(tmp, { force: true })
    throw error
  }
  return { out: options.out, files: ["README.txt", "index.json", ...members.map((m) => m.name)], notes }
}
