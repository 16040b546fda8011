/**
 * Exports read every form the live service answers in: a sandbox answering with the Blueprint's `userId` exports
 * the same users as one answering with the captured `userID`, and the Blueprint's read-only lists and task types
 * are exported with the rest of the account.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { accountA, exportAll, http, readCsv, startTestSandbox, tempDir } from "./support.js"

/** Two users (one a team manager with a base point), a customer in a segment and a task naming them. */
const seed = (sandbox: RunningSandbox) =>
  Effect.promise(async () => {
    const api = await http(sandbox, accountA)
    const ana = await api.send("POST", "/users", {
      externalId: "U1",
      login: "ana",
      name: "Ana",
      userType: 2,
      address: "Rua A"
    })
    const id = ana.userID ?? ana.userId
    await api.send("POST", "/users", { externalId: "U2", login: "bruno", name: "Bruno", userType: 1 })
    await api.send("POST", "/customers", { externalId: "C1", name: "Padaria", managersId: [id] })
    await api.send("POST", "/tasks", { externalId: "OS-1", idUserFrom: id, taskDate: "2026-11-20T09:00:00" })
    await api.send("POST", "/webhooks", { entity: 7, action: 2, targetUrl: "https://example.com/h" })
  })

const exported = (style: "userID" | "userId") =>
  Effect.gen(function*() {
    const sandbox = yield* startTestSandbox({ userIdStyle: style })
    yield* seed(sandbox)
    const dir = yield* tempDir
    const result = yield* exportAll(sandbox, dir)
    return { dir, result, csv: (name: string) => readCsv(Path.join(dir, `${name}.csv`)) }
  })

describe("export: read forms", () => {
  it.scopedLive(
    "users read back as userId (the Blueprint) export exactly as users read back as userID (captured traffic)",
    () =>
      Effect.gen(function*() {
        const captured = yield* exported("userID")
        const blueprint = yield* exported("userId")
        for (const name of ["users", "customers", "tasks", "webhooks"]) {
          assert.deepStrictEqual(blueprint.csv(name).rows, captured.csv(name).rows, `${name}.csv`)
        }
        const users = blueprint.csv("users").rows
        assert.deepStrictEqual(users.map((u) => [u["id"], u["userType"], u["address"]]), [["1", "2", "Rua A"], [
          "2",
          "1",
          ""
        ]])
        assert.strictEqual(blueprint.csv("customers").rows[0]!["managersLogin"], "ana")
        assert.strictEqual(blueprint.csv("tasks").rows[0]!["userFromLogin"], "ana")
        assert.deepInclude(blueprint.csv("webhooks").rows[0]!, { entity: "7", action: "2" })
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )

  it.scopedLive(
    "task types and the read-only lists (questionnaires, GPS positions, satisfaction surveys, quotations) are exported",
    () =>
      Effect.gen(function*() {
        const { result, csv } = yield* exported("userID")
        const rows = new Map(result.manifest.resources.map((e) => [e.name, e.rows]))
        assert.strictEqual(rows.get("task-types"), 6)
        assert.strictEqual(rows.get("questionnaires"), 2)
        assert.strictEqual(rows.get("gps-positions"), 3)
        assert.strictEqual(rows.get("satisfaction-surveys"), 1)
        assert.strictEqual(rows.get("quotations"), 1)
        assert.deepInclude(csv("task-types").rows[0]!, {
          id: "1",
          description: "Manutenção preventiva",
          standartTime: "01:00:00"
        })
        assert.deepInclude(csv("gps-positions").rows[0]!, { userId: "1", positionDate: "2026-11-20T08:00:00" })
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
