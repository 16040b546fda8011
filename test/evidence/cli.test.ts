/**
 * Evidence an auditor can check, as users run it (`node dist/bin.js`, built first) against a sandbox on loopback:
 * `keys new`, signed exports and runs, `verify` of an export and of a run directory (the journal's hash chain), a
 * run killed with SIGKILL then resumed, journals of older versions, and the `evidence` bundle.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import yauzl from "yauzl"
import { newKeyPair } from "../../src/evidence/Keys.js"
import { noFaults } from "../../src/sandbox/Sandbox.js"
import {
  customersCsv,
  journalCount,
  put,
  runCli,
  spawnCli,
  startTestSandbox,
  tempDir,
  until
} from "../import/support.js"
import { lastJson } from "../support.js"

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex")

const journalLines = (runDir: string) => readFileSync(Path.join(runDir, "journal.ndjson"), "utf8").split("\n")

const writeJournal = (runDir: string, lines: ReadonlyArray<string>) =>
  writeFileSync(Path.join(runDir, "journal.ndjson"), lines.join("\n"))

/** Every entry of a zip, read with yauzl (the reader the tool's xlsx reading uses). */
const unzip = (file: string) =>
  Effect.promise(() =>
    new Promise<Map<string, Buffer>>((resolve, reject) => {
      const out = new Map<string, Buffer>()
      yauzl.open(file, { lazyEntries: true, validateEntrySizes: true }, (error, zip) => {
        if (error !== null || zip === undefined) return reject(error)
        zip.on("entry", (entry: yauzl.Entry) => {
          zip.openReadStream(entry, (e, stream) => {
            if (e !== null || stream === undefined) return reject(e)
            const chunks: Array<Buffer> = []
            stream.on("data", (c: Buffer) => chunks.push(c))
            stream.on("end", () => {
              out.set(entry.fileName, Buffer.concat(chunks))
              zip.readEntry()
            })
          })
        })
        zip.on("end", () => resolve(out))
        zip.on("error", reject)
        zip.readEntry()
      })
    })
  )

describe("keys and signed exports", () => {
  it.scopedLive(
    "keys new writes a private key only its owner reads; a signed export's verify catches a file edited with its checksum recomputed, and a signature by another key",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const made = yield* runCli(["keys", "new", "--out", "keys", "--json"], undefined, dir)
        assert.strictEqual(made.code, 0, made.stderr)
        const keys = lastJson(made.stdout)
        assert.strictEqual(statSync(Path.resolve(dir, keys.privateKey)).mode & 0o777, 0o600)
        assert.strictEqual(statSync(Path.resolve(dir, keys.publicKey)).mode & 0o777, 0o644)
        const again = yield* runCli(["keys", "new", "--out", "keys"], undefined, dir)
        assert.strictEqual(again.code, 2, "a pair is never overwritten")
        assert.match(again.stderr, /already exists/)
        // Another pair, made in process: `keys new` itself was checked above (one spawn less).
        const other = yield* newKeyPair(Path.join(dir, "other"))

        const file = put(dir, "clientes.csv", customersCsv(3))
        const imported = yield* runCli(["import", "customers", file, "--out", "run"], sandbox, dir)
        assert.strictEqual(imported.code, 0, imported.stderr)

        const exported = yield* runCli(
          ["export", "customers", "--out", "export", "--sign", keys.privateKey],
          sandbox,
          dir
        )
        assert.strictEqual(exported.code, 0, exported.stderr)
        assert.isTrue(existsSync(Path.join(dir, "export", "manifest.sig")))
        const verify = (...more: Array<string>) => runCli(["verify", "export", "--json", ...more], undefined, dir)
        const clean = yield* verify("--public-key", keys.publicKey)
        assert.strictEqual(clean.code, 0, clean.stderr)
        assert.deepInclude(lastJson(clean.stdout).signature, { status: "valid", trusted: true })

        const byOther = yield* verify("--public-key", other.publicKey)
        assert.strictEqual(byOther.code, 1, "a signature by another key is refused")
        assert.strictEqual(lastJson(byOther.stdout).signature.status, "other-key")

        // The forger's edit: a name changed in the data file, its sha256 recomputed into the manifest.
        const csv = Path.join(dir, "export", "customers.csv")
        writeFileSync(csv, readFileSync(csv, "utf8").replace("Cliente 1", "Cliente X"))
        const manifestPath = Path.join(dir, "export", "manifest.json")
        const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
        manifest.resources[0].sha256 = sha256(readFileSync(csv))
        manifest.resources[0].bytes = readFileSync(csv).length
        writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)
        for (const args of [["--public-key", keys.publicKey], []]) {
          const forged = yield* verify(...args)
          assert.strictEqual(forged.code, 1, forged.stdout)
          const problems: Array<string> = lastJson(forged.stdout).problems
          assert.isTrue(
            problems.some((p) => /manifest\.json was changed after it was signed/.test(p)),
            problems.join("\n")
          )
          assert.isTrue(
            lastJson(forged.stdout).files.every((f: any) => f.status === "ok"),
            "the checksums themselves match"
          )
        }

        // An unsigned export verifies as before, and says it is unsigned; a key asked for makes it fail.
        const plain = yield* runCli(["export", "customers", "--out", "plain"], sandbox, dir)
        assert.strictEqual(plain.code, 0, plain.stderr)
        const unsigned = yield* runCli(["verify", "plain"], undefined, dir)
        assert.strictEqual(unsigned.code, 0, unsigned.stderr)
        assert.match(unsigned.stderr, /unsigned/)
        const wanted = yield* runCli(["verify", "plain", "--public-key", keys.publicKey], undefined, dir)
        assert.strictEqual(wanted.code, 1)
        assert.match(wanted.stderr, /manifest\.sig is missing/)

        // A private key others can read is used, with a warning that says how to fix it.
        chmodSync(Path.resolve(dir, keys.privateKey), 0o644)
        const loose = yield* runCli(["export", "customers", "--out", "loose", "--sign", keys.privateKey], sandbox, dir)
        assert.strictEqual(loose.code, 0, loose.stderr)
        assert.match(loose.stderr, /its group or others can read it \(mode 0644\); make it private: chmod 600/)
        const notAKey = yield* runCli(["import", "customers", file, "--out", "bad", "--sign", file], sandbox, dir)
        assert.strictEqual(notAKey.code, 2, "a bad key is refused before anything is sent")
        assert.isFalse(existsSync(Path.join(dir, "bad", "journal.ndjson")))
      }),
    120_000
  )
})

describe("verify RUN_DIR: the journal's hash chain", () => {
  it.scopedLive(
    "a signed run verifies; a removed, an edited, a moved line and a cut tail are each detected",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const keys = yield* newKeyPair(Path.join(dir, "k"))
        const file = put(dir, "clientes.csv", customersCsv(4))
        const run = Path.join(dir, "run")
        const imported = yield* runCli(
          ["import", "customers", file, "--out", run, "--sign", keys.privateKey],
          sandbox,
          dir
        )
        assert.strictEqual(imported.code, 0, imported.stderr)
        assert.match(imported.stderr, /signed: .*summary\.sig/)
        const lines = journalLines(run)
        const header = JSON.parse(lines[0]!)
        assert.strictEqual(header.chain, "sha256")
        assert.strictEqual(JSON.parse(lines[1]!).prev, sha256(Buffer.from(lines[0]!)))

        const verify = () => runCli(["verify", run, "--public-key", keys.publicKey, "--json"], undefined, dir)
        const clean = yield* verify()
        assert.strictEqual(clean.code, 0, clean.stdout + clean.stderr)
        assert.isTrue(lastJson(clean.stdout).ok)
        assert.strictEqual(lastJson(clean.stdout).journals[0].lines, lines.length - 1)

        const original = [...lines]
        const tampered = async (change: (l: Array<string>) => Array<string>) => {
          writeJournal(run, change([...original]))
          const { code, stdout } = await Effect.runPromise(verify())
          writeJournal(run, original)
          return { code, problems: lastJson(stdout).problems as Array<string> }
        }
        const removed = yield* Effect.promise(() => tampered((l) => [...l.slice(0, 3), ...l.slice(4)]))
        assert.strictEqual(removed.code, 1)
        assert.isTrue(
          removed.problems.some((p) => /line 4 does not follow line 3/.test(p)),
          removed.problems.join("\n")
        )

        const edited = yield* Effect.promise(() =>
          tampered((l) => l.map((t, i) => (i === 4 ? t.replace(/"at":"[^"]+"/, `"at":"2020-01-01T00:00:00.000Z"`) : t)))
        )
        assert.strictEqual(edited.code, 1)
        assert.isTrue(edited.problems.some((p) => /line 6 does not follow line 5/.test(p)), edited.problems.join("\n"))

        const moved = yield* Effect.promise(() => tampered((l) => [l[0]!, l[2]!, l[1]!, ...l.slice(3)]))
        assert.strictEqual(moved.code, 1)

        // The tail cut off whole: the chain that is left is intact, the signed summary says where it ended.
        const cut = yield* Effect.promise(() => tampered((l) => [...l.slice(0, -3), ""]))
        assert.strictEqual(cut.code, 1)
        assert.isTrue(cut.problems.some((p) => /its last 2 line\(s\) were removed/.test(p)), cut.problems.join("\n"))

        // The report edited: covered by the signature too.
        const report = Path.join(run, "report.csv")
        writeFileSync(report, readFileSync(report, "utf8").replace("created", "updated"))
        const reportEdited = yield* verify()
        assert.strictEqual(reportEdited.code, 1)
        assert.match(
          lastJson(reportEdited.stdout).problems.join("\n"),
          /report\.csv was changed after the run was signed/
        )
      }),
    120_000
  )

  it.scopedLive(
    "a run killed with SIGKILL (its last line torn) and resumed with --sign: the chain runs on and verifies; an older journal without a chain is reported unchained, never tampered",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox({ faults: { ...noFaults, latencyMs: 60 } })
        const dir = yield* tempDir
        const keys = yield* newKeyPair(Path.join(dir, "k"))
        const file = put(dir, "clientes.csv", customersCsv(40))
        const run = Path.join(dir, "run")
        const cli = spawnCli(
          ["import", "customers", file, "--mode", "create", "--out", run, "--rate", "50/2s", "--concurrency", "4"],
          sandbox,
          dir
        )
        yield* until(() => journalCount(run, "done") >= 5)
        cli.child.kill("SIGKILL")
        assert.strictEqual((yield* Effect.promise(() => cli.exit)).signal, "SIGKILL")
        // What a kill in the middle of a write leaves: part of a line, no newline.
        appendFileSync(Path.join(run, "journal.ndjson"), `{"state":"done","row":99,"sta`)

        const resumed = yield* runCli(["resume", run, "--sign", keys.privateKey, "--json"], sandbox, dir)
        assert.strictEqual(resumed.code, 0, resumed.stderr)
        assert.strictEqual(lastJson(resumed.stdout).counts.created, 40)
        const verified = yield* runCli(["verify", run, "--public-key", keys.publicKey, "--json"], undefined, dir)
        assert.strictEqual(verified.code, 0, verified.stdout + verified.stderr)
        const result = lastJson(verified.stdout)
        assert.strictEqual(result.journals[0].torn.length, 1)
        assert.match(result.notes.join("\n"), /is torn/)

        // A journal as an older version wrote it: no chain marker, no prev. Read, resumed, reported as unchained.
        const old = Path.join(dir, "old")
        const oldFile = put(dir, "antigos.csv", customersCsv(3).replaceAll("K-", "OLD-"))
        const first = yield* runCli(["import", "customers", oldFile, "--out", old], sandbox, dir)
        assert.strictEqual(first.code, 0, first.stderr)
        writeJournal(
          old,
          journalLines(old).map((t) => {
            if (t === "") return t
            const { chain: _c, prev: _p, ...line } = JSON.parse(t)
            return JSON.stringify(line)
          })
        )
        const oldVerify = yield* runCli(["verify", old, "--json"], undefined, dir)
        assert.strictEqual(oldVerify.code, 0, oldVerify.stdout)
        assert.isFalse(lastJson(oldVerify.stdout).journals[0].chained)
        assert.match(lastJson(oldVerify.stdout).notes.join("\n"), /unchained/)
        const rerun = yield* runCli(["resume", old, "--json"], sandbox, dir)
        assert.strictEqual(rerun.code, 0, rerun.stderr)
        assert.isFalse(journalLines(old).some((t) => t.includes(`"prev"`)), "an unchained journal stays unchained")
        assert.strictEqual((yield* runCli(["verify", old], undefined, dir)).code, 0)
      }),
    120_000
  )
})

describe("evidence RUN_DIR --out FILE.zip", () => {
  it.scopedLive(
    "the bundle opens, its index matches its files, it holds the journal, reports, summary, signature and key, no secret, and the input only when asked",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        const keys = yield* newKeyPair(Path.join(dir, "k"))
        const file = put(dir, "clientes.csv", "externalId;name\nK-1;Padaria São João\nK-2;Açougue Boi\n")
        const run = Path.join(dir, "run")
        const imported = yield* runCli(
          ["import", "customers", file, "--out", run, "--sign", keys.privateKey],
          sandbox,
          dir
        )
        assert.strictEqual(imported.code, 0, imported.stderr)

        const bundled = yield* runCli(["evidence", run, "--out", "evidence.zip", "--json"], sandbox, dir)
        assert.strictEqual(bundled.code, 0, bundled.stderr)
        const entries = yield* unzip(Path.join(dir, "evidence.zip"))
        const names = [...entries.keys()]
        assert.deepStrictEqual(names.slice(0, 2), ["README.txt", "index.json"])
        for (
          const name of [
            "run/journal.ndjson",
            "run/report.csv",
            "run/report.xlsx",
            "run/summary.json",
            "run/summary.sig",
            "signing.pub"
          ]
        ) {
          assert.include(names, name)
        }
        assert.isFalse(names.some((n) => n.startsWith("input/")), "the input stays out without --with-input")
        const index = JSON.parse(entries.get("index.json")!.toString("utf8"))
        assert.deepStrictEqual(
          index.files.map((f: any) => f.name).sort(),
          names.filter((n) => n !== "index.json").sort(),
          "the index lists every file but itself"
        )
        for (const f of index.files) assert.strictEqual(sha256(entries.get(f.name)!), f.sha256, f.name)
        assert.strictEqual(index.inputs[0].sha256, sha256(readFileSync(file)))
        assert.isFalse(index.inputs[0].included)
        assert.strictEqual(
          entries.get("signing.pub")!.toString("utf8"),
          readFileSync(Path.resolve(dir, keys.publicKey), "utf8")
        )
        assert.strictEqual(
          entries.get("run/journal.ndjson")!.toString("utf8"),
          readFileSync(Path.join(run, "journal.ndjson"), "utf8")
        )
        assert.match(entries.get("README.txt")!.toString("utf8"), /fsm-bulk verify run --public-key/)
        const account = sandbox.accounts[0]!
        for (const [name, bytes] of entries) {
          assert.notInclude(bytes.toString("utf8"), account.apiToken, name)
          assert.notInclude(bytes.toString("latin1"), account.apiToken, name)
        }

        const withInput = yield* runCli(["evidence", run, "--out", "full.zip", "--with-input"], undefined, dir)
        assert.strictEqual(withInput.code, 0, withInput.stderr)
        const full = yield* unzip(Path.join(dir, "full.zip"))
        assert.deepStrictEqual(full.get("input/clientes.csv"), readFileSync(file))

        const over = yield* runCli(["evidence", run, "--out", "full.zip"], undefined, dir)
        assert.strictEqual(over.code, 2, "an existing file is never written over")

        // Users' passwords (the server keeps them, never shows them) are in the report as in the input: the reports
        // are withheld, a redacted copy in their place, and the unzipped run still verifies against the signature.
        const users = put(
          dir,
          "usuarios.csv",
          "externalId;name;login;password\nUSR-1;Ana Souza;ana.souza;Segredo@2026\n"
        )
        const usersRun = Path.join(dir, "users-run")
        const usersImport = yield* runCli(
          ["import", "users", users, "--out", usersRun, "--sign", keys.privateKey],
          sandbox,
          dir
        )
        assert.strictEqual(usersImport.code, 0, usersImport.stderr)
        const usersZip = Path.join(dir, "users.zip")
        const usersBundle = yield* runCli(["evidence", usersRun, "--out", usersZip], undefined, dir)
        assert.strictEqual(usersBundle.code, 0, usersBundle.stderr)
        assert.match(usersBundle.stderr, /report\.csv and report\.xlsx withheld/)
        const usersEntries = yield* unzip(usersZip)
        assert.isFalse(usersEntries.has("run/report.csv") || usersEntries.has("run/report.xlsx"))
        assert.include(usersEntries.get("run/report.redacted.csv")!.toString("utf8"), "[redacted]")
        for (const [name, bytes] of usersEntries) assert.notInclude(bytes.toString("utf8"), "Segredo@2026", name)
        const unpacked = Path.join(dir, "unpacked")
        for (const [name, bytes] of usersEntries) {
          mkdirSync(Path.dirname(Path.join(unpacked, name)), { recursive: true })
          writeFileSync(Path.join(unpacked, name), bytes)
        }
        const bundleVerify = yield* runCli(
          ["verify", Path.join(unpacked, "run"), "--public-key", keys.publicKey],
          undefined,
          dir
        )
        assert.strictEqual(bundleVerify.code, 0, bundleVerify.stderr)
        assert.match(bundleVerify.stderr, /report\.csv was withheld from this copy/)

        // A credential that reached a run file stops the bundle (here the journal is handed a token's shape).
        appendFileSync(Path.join(run, "report.csv"), `"Authorization: Bearer abcdefghijklmnop"\n`)
        const leaky = yield* runCli(["evidence", run, "--out", "leaky.zip"], undefined, dir)
        assert.notStrictEqual(leaky.code, 0)
        assert.match(leaky.stderr, /report\.csv: line \d+ holds a credential/)
        assert.isFalse(existsSync(Path.join(dir, "leaky.zip")))
      }),
    120_000
  )
})
