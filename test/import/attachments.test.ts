/**
 * Attachment cells of a spreadsheet received from someone else: only files inside the input file's folder (or
 * `--attachments-root`) are read and sent. Absolute paths, `..` (also written the Windows way), links leading out,
 * procfs, pipes and folders make the row invalid, nothing of them reaches the server, and a legitimate file in a
 * subfolder still uploads. The rule is applied again when the file is read for sending.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import { rmSync, symlinkSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { rerun } from "../../src/import/Rerun.js"
import { loadRun } from "../../src/import/Resume.js"
import type { Status } from "../../src/Status.js"
import { checkAttachment, readAttachment } from "../../src/validate/Attachment.js"
import {
  apiOf,
  importInto,
  layout,
  put,
  readJournalLines,
  readReport,
  secret,
  startTestSandbox,
  tempDir,
  writes
} from "./support.js"

const hostile = (outside: string): ReadonlyArray<readonly [string, string]> => [
  [Path.join(outside, "secret.txt"), "is outside the attachments folder"],
  ["../outside/secret.txt", "is outside the attachments folder"],
  ["..\\outside\\secret.txt", "is outside the attachments folder"],
  ["docs/../../outside/secret.txt", "is outside the attachments folder"],
  ["link.txt", "leads outside the attachments folder"],
  ["linked-folder/secret.txt", "leads outside the attachments folder"],
  ["/proc/self/environ", "is outside the attachments folder"],
  ["pipe", "is a named pipe, not a file"],
  ["docs", "is a folder, not a file"]
]

const customersCsv = "externalId,name\nCLI-1,Padaria\n"

describe("attachments stay inside the input file's folder", () => {
  it.scopedLive("hostile paths make their rows invalid and nothing of them is sent; a file in a subfolder uploads", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { book, outside } = layout(dir)
      const sandbox = yield* startTestSandbox()
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "customers.csv", customersCsv),
        runDir: Path.join(dir, "seed")
      })
      const rows = hostile(outside)
      const csv = [
        "customerExternalId,file,name",
        "CLI-1,docs/contrato.pdf,",
        "CLI-1,atalho.pdf,",
        ...rows.map(([cell], i) => `CLI-1,"${cell}",hostile-${i}`)
      ].join("\n")
      const file = put(book, "anexos.csv", csv + "\n")
      const before = writes(yield* sandbox.control.requests).length
      const runDir = Path.join(dir, "run")
      const result = yield* importInto(sandbox, { resource: "customer-attachments", file, runDir })

      const report = readReport(runDir)
      assert.deepStrictEqual(report.slice(0, 2).map((r) => r._status), ["updated", "updated"])
      rows.forEach(([cell, why], i) => {
        const row = report[i + 2]!
        assert.strictEqual(row._status, "invalid", cell)
        assert.include(row._error, `file: "${cell.length > 59 ? cell.slice(0, 59) : cell}`, cell)
        assert.include(row._error, why, cell)
      })
      assert.strictEqual(result.summary.counts.invalid, rows.length)
      // Two uploads, the legitimate ones; the stored files are the contract, never the secret.
      assert.strictEqual(writes(yield* sandbox.control.requests).length - before, 2)
      const [customer] = yield* sandbox.control.records(sandbox.accounts[0]!.apiKey, "customers")
      const attached = (customer!["attachments"] ?? Object.values(customer!).find(Array.isArray)) as Array<
        { name: string; size: number }
      >
      assert.deepStrictEqual(attached.map((a) => a.name).sort(), ["atalho.pdf", "contrato.pdf"])
      assert.strictEqual(attached.every((a) => a.size === "%PDF-1.4 contrato\n".length), true)
    }))

  it.scopedLive("--attachments-root widens the folder, and resume keeps using it from the journal", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { book } = layout(dir)
      const sandbox = yield* startTestSandbox()
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "customers.csv", customersCsv),
        runDir: Path.join(dir, "seed")
      })
      const file = put(book, "anexos.csv", "customerExternalId,file,name\nCLI-1,../outside/secret.txt,shared\n")
      const narrow = yield* importInto(sandbox, {
        resource: "customer-attachments",
        file,
        runDir: Path.join(dir, "narrow"),
        dryRun: true
      })
      assert.strictEqual(narrow.summary.counts.invalid, 1)
      const runDir = Path.join(dir, "wide")
      const wide = yield* importInto(sandbox, { resource: "customer-attachments", file, runDir, attachmentsRoot: dir })
      assert.strictEqual(wide.summary.counts.updated, 1)
      assert.strictEqual(readJournalLines(runDir)[0]!.parse.attachmentsRoot, dir)
      assert.strictEqual((yield* loadRun(runDir)).job.attachmentsRoot, dir)
      // Even with the widest root, procfs is never read.
      const proc = put(book, "proc.csv", "customerExternalId,file,name\nCLI-1,/proc/self/environ,env\n")
      const refused = yield* importInto(sandbox, {
        resource: "customer-attachments",
        file: proc,
        runDir: Path.join(dir, "proc"),
        attachmentsRoot: "/"
      })
      assert.match(
        readReport(Path.join(dir, "proc"))[0]!._error,
        /^file: "\/proc\/self\/environ" is a system file \(\/proc\/\d+\/environ\), not a document/
      )
      assert.strictEqual(refused.summary.counts.invalid, 1)
    }))
})

describe("attachments are checked again when read", () => {
  it.scopedLive("a file swapped for a link out, a pipe or a bigger file after validation is not read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { book, outside } = layout(dir)
      const rules = { baseDir: book, maxBytes: 64 }
      const path = Path.join(book, "docs", "contrato.pdf")
      const checked = yield* Effect.promise(() => checkAttachment("docs/contrato.pdf", rules))
      assert.deepStrictEqual(checked, { path, name: "contrato.pdf", bytes: 18 })
      const read = (p: string) =>
        Effect.promise(() =>
          readAttachment(p, rules.maxBytes).then((b) => b.toString(), (e: Error) => `refused: ${e.message}`)
        )
      assert.strictEqual(yield* read(path), "%PDF-1.4 contrato\n")

      rmSync(path)
      symlinkSync(Path.join(outside, "secret.txt"), path)
      assert.strictEqual(yield* read(path), `refused: ${path} is now a link (${path}), not the file that was checked`)

      rmSync(path)
      execFileSync("mkfifo", [path])
      assert.strictEqual(yield* read(path), `refused: ${path} is now a named pipe (${path}), not a file`)

      // A folder of the path swapped for a link out: the path no longer resolves to itself.
      rmSync(Path.join(book, "docs"), { recursive: true })
      symlinkSync(outside, Path.join(book, "docs"))
      writeFileSync(Path.join(outside, "contrato.pdf"), secret)
      assert.strictEqual(
        yield* read(path),
        `refused: ${path} now leads to ${
          Path.join(outside, "contrato.pdf")
        }, not to the file that was checked (${path})`
      )

      writeFileSync(Path.join(book, "grows.pdf"), "small")
      const grows = yield* Effect.promise(() => checkAttachment("grows.pdf", rules))
      assert.strictEqual(typeof grows, "object")
      writeFileSync(Path.join(book, "grows.pdf"), Buffer.alloc(100, 1))
      assert.strictEqual(
        yield* read(Path.join(book, "grows.pdf")),
        `refused: ${Path.join(book, "grows.pdf")} is larger than 64 bytes now; attachments are limited to 64 bytes`
      )
    }))
})

describe("rerun keeps the attachments folder of its parent run", () => {
  it.scopedLive("a row that failed is sent again with the parent's --attachments-root, unless another is given", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { book } = layout(dir)
      const sandbox = yield* startTestSandbox()
      // CLI-1 does not exist yet: the row fails on its reference.
      const file = put(book, "anexos.csv", "customerExternalId,file,name\nCLI-1,../outside/secret.txt,shared\n")
      const runDir = Path.join(dir, "run")
      yield* importInto(sandbox, { resource: "customer-attachments", file, runDir, attachmentsRoot: dir })
      const first = readReport(runDir)[0]!
      assert.notStrictEqual(first._status, "invalid")
      assert.notStrictEqual(first._status, "updated")
      yield* importInto(sandbox, {
        resource: "customers",
        file: put(dir, "customers.csv", customersCsv),
        runDir: Path.join(dir, "seed")
      })

      const request = (out: string, attachmentsRoot?: string) => ({
        target: runDir,
        only: [first._status as Status],
        fixed: undefined,
        dryRun: false,
        attachmentsRoot,
        out: () => out
      })
      const narrowed = yield* rerun(request(Path.join(dir, "r1"), book)).pipe(Effect.provide(apiOf(sandbox)))
      assert.strictEqual(narrowed.result!.summary.counts.invalid, 1)
      const kept = yield* rerun(request(Path.join(dir, "r2"))).pipe(Effect.provide(apiOf(sandbox)))
      assert.deepStrictEqual(readReport(Path.join(dir, "r2")).map((r) => r._status), ["updated"])
      assert.strictEqual(kept.result!.summary.counts.updated, 1)
    }))
})
