/**
 * The tool as a user installs it: the packed tarball installed globally into a temporary prefix (dependencies from
 * npm's cache, fetched from the registry only when missing), then run from another folder, where no repository
 * is at hand: `--version` and `-v`, the guides (`docs`), the manual page npm links, and a `validate` of a
 * Brazilian customer file (Windows-1252, `;`, dd/mm/yyyy is not needed for customers).
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { version } from "../../src/Version.js"

const repo = Path.resolve(import.meta.dirname, "..", "..")
const work = mkdtempSync(Path.join(tmpdir(), "fsm-package-"))
const prefix = Path.join(work, "prefix")
const bin = Path.join(prefix, "bin", "fsm-bulk")
const elsewhere = Path.join(work, "elsewhere")

const npm = promisify(execFile)

/** The installed command, run from a folder outside the repository (never blocking the test worker). */
const run = (args: ReadonlyArray<string>) =>
  npm(bin, args, { cwd: elsewhere, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } }).then(
    ({ stderr, stdout }) => ({ status: 0, stdout, stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      status: e.code ?? -1,
      stdout: e.stdout ?? "",
      stderr: e.stderr ?? ""
    })
  )

// Asynchronous: a synchronous install blocks the test worker past vitest's own heartbeat.
beforeAll(async () => {
  // `npm test` has built dist/ (and its man page); pack what `files` lists, as `npm publish` would.
  const packed = JSON.parse(
    (await npm("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: repo })).stdout
  ) as ReadonlyArray<{ readonly filename: string }>
  await npm("npm", [
    "install",
    "--global",
    "--prefix",
    prefix,
    "--prefer-offline",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    Path.join(work, packed[0]!.filename)
  ], { cwd: work })
  mkdirSync(elsewhere)
}, 300_000)

afterAll(() => rm(work, { recursive: true, force: true }), 300_000)

describe("the installed package", () => {
  it("answers --version and -v with the package's version", async () => {
    for (const flag of ["--version", "-v"]) {
      const r = await run([flag])
      expect(r.status).toBe(0)
      expect(r.stdout.trim()).toBe(version)
    }
  })

  it("prints the guides that ship with it, from any folder", async () => {
    const list = await run(["docs"])
    expect(list.status).toBe(0)
    for (const topic of ["readme", "importing", "runs", "export", "connecting", "sandbox"]) {
      expect(list.stdout).toMatch(new RegExp(`^  ${topic}\\s`, "m"))
    }
    const guide = await run(["docs", "importing"])
    expect(guide.status).toBe(0)
    expect(guide.stdout).toBe(readFileSync(Path.join(repo, "docs", "importing.md"), "utf8"))
    const path = (await run(["docs", "runs", "--path"])).stdout.trim()
    expect(path.startsWith(Path.join(prefix, "lib", "node_modules", "fsm-bulk"))).toBe(true)
    expect(existsSync(path)).toBe(true)
    const wrong = await run(["docs", "importng"])
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toContain(`did you mean "importing"`)
    // Help names the guide by the command that prints it, which works here.
    expect((await run(["import", "--help"])).stdout).toContain("fsm-bulk docs importing")
  })

  it("installs the manual page drawn from the help", () => {
    const man = readFileSync(Path.join(prefix, "share", "man", "man1", "fsm-bulk.1"), "utf8")
    expect(man).toMatch(/^\.TH FSM-BULK 1 /)
    expect(man).toContain(`fsm-bulk ${version}`)
    expect(man).toContain(`.SS "fsm-bulk import"`)
  })

  it("validates a customer's file from another folder", async () => {
    const file = Path.join(elsewhere, "clientes.csv")
    writeFileSync(
      file,
      Buffer.from("externalId;name;note\nC-1;Padaria São João;Entrega às terças\nC-2;Açougue Irmãos Lópes;\n", "latin1")
    )
    const r = await run(["validate", "customers", "clientes.csv", "--out", "verificacao", "--json"])
    expect(r.stderr).not.toContain("Error:")
    expect(r.status).toBe(0)
    const report = readFileSync(Path.join(elsewhere, "verificacao", "report.csv"), "utf8")
    expect(report).toContain("Padaria São João")
    expect(report).toContain("Açougue Irmãos Lópes")
  })
})
