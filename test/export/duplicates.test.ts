/**
 * `verify` reads each file's ids and keys: an export in which two rows share one id (an id rounded past 2^53) or
 * one key (a hand edit) fails, naming the file, the value and the rows, even when its bytes match the manifest.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { runVerify } from "../../src/export/Verify.js"
import { tempDir } from "./support.js"

/** An export directory as the exporter writes it: the files, and a manifest whose sha256 and rows match them. */
const exportDir = (dir: string, files: Record<string, string>) => {
  const resources = Object.entries(files).map(([name, text]) => {
    writeFileSync(Path.join(dir, `${name}.csv`), text)
    return {
      name,
      file: `${name}.csv`,
      rows: text.trim().split("\n").length - 1,
      sha256: createHash("sha256").update(text).digest("hex")
    }
  })
  const manifest = {
    tool: "fsm-bulk",
    version: "0.0.0",
    baseUrl: "http://127.0.0.1:1",
    started: "2026-11-27T10:00:00.000Z",
    finished: "2026-11-27T10:00:01.000Z",
    since: null,
    until: null,
    resources
  }
  writeFileSync(Path.join(dir, "manifest.json"), JSON.stringify(manifest, null, 2))
}

describe("verify and duplicates", () => {
  it.scoped("two rows of one id or one key fail verify, naming the file, the value and the rows", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      exportDir(dir, {
        customers: [
          "id,externalId,name",
          "1,CLI-1,Padaria São João",
          "9007199254740992,CLI-2,Mercado",
          "9007199254740992,CLI-3,Loja",
          "4,cli-1,Outra padaria",
          "5,,Sem chave",
          "6,,Sem chave 2"
        ].join("\n") + "\n",
        equipments: "id,externalId,name\n1,EQ-1,Bomba\n2,EQ-2,Filtro\n"
      })
      const result = yield* runVerify(dir)
      assert.isFalse(result.ok)
      const customers = result.files.find((f) => f.name === "customers")!
      assert.strictEqual(customers.status, "duplicates")
      assert.strictEqual(customers.rows, 6)
      assert.deepStrictEqual(customers.duplicates, [
        { column: "id", value: "9007199254740992", rows: [3, 4], count: 2 },
        { column: "externalId", value: "CLI-1", rows: [2, 5], count: 2 }
      ])
      assert.strictEqual(result.files.find((f) => f.name === "equipments")?.status, "ok")
      assert.deepStrictEqual(result.problems, [
        "customers.csv holds 2 records more than once: id \"9007199254740992\" on rows 3, 4; externalId \"CLI-1\" on rows 2, 5 (an id rounded past 2^53, or a hand edit: export again)"
      ])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.scoped("a clean export still passes", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      exportDir(dir, { customers: "id,externalId,name\n1,CLI-1,Padaria\n2,CLI-2,Mercado\n" })
      const result = yield* runVerify(dir)
      assert.isTrue(result.ok, result.problems.join("\n"))
    }).pipe(Effect.provide(NodeContext.layer)))
})
