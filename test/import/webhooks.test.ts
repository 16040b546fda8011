/**
 * Webhooks under the live service's rule of one subscription per entity (api-notes: a second one is refused with
 * error code 1026): an import meets the sandbox's refusal before it sends anything, naming the webhook that holds
 * the entity, and a dry run says so too; the same URL is `unchanged`; nothing loops and nothing is reported
 * `created` that the server did not create.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { importInto, put, readReport, rowStatuses, startTestSandbox, tempDir, writes } from "./support.js"

describe("import: one webhook per entity", () => {
  it.scopedLive(
    "a row for an entity that already has a webhook under another URL is refused unsent, naming it; the same URL is unchanged",
    () =>
      Effect.gen(function*() {
        const sandbox = yield* startTestSandbox()
        const dir = yield* tempDir
        yield* importInto(sandbox, {
          resource: "webhooks",
          file: put(dir, "w1.csv", "entity;action;targetUrl;active\nTask;Inclusao;https://example.com.br/a;true\n"),
          runDir: Path.join(dir, "w1")
        })
        const [held] = yield* sandbox.control.records("sandbox-key", "webhooks")
        const file = put(
          dir,
          "w2.csv",
          [
            "entity;action;targetUrl;active",
            "Task;Alteracao;https://example.com.br/b;true", // a second one for Task
            "Customer;Inclusao;https://example.com.br/c;true",
            "Customer;Exclusao;https://example.com.br/d;true", // a second one for Customer within the file
            ""
          ].join("\n")
        )
        const expected = ["2:invalid", "3:created", "4:invalid"]
        const dry = yield* importInto(sandbox, {
          resource: "webhooks",
          file,
          runDir: Path.join(dir, "dry"),
          dryRun: true
        })
        // a dry run marks what it would do as planned (`would-create`), not as done
        assert.deepStrictEqual(rowStatuses(readReport(dry.runDir)), ["2:invalid", "3:would-create", "4:invalid"])

        const mark = (yield* sandbox.control.requests).length
        const run = yield* importInto(sandbox, { resource: "webhooks", file, runDir: Path.join(dir, "w2") })
        const report = readReport(run.runDir)
        assert.deepStrictEqual(rowStatuses(report), expected)
        assert.strictEqual(
          report[0]!._error,
          `entity: the service keeps one webhook per entity, and "Task" already has one: targetUrl "https://example.com.br/a", id ${
            String(held!.id)
          }; delete that one first, or give its targetUrl`
        )
        assert.match(report[2]!._error!, /entity.*repeats row 3/)
        assert.strictEqual(run.exitCode, 1)
        // One request written in all: the one create; nothing refused was sent, nothing was tried again.
        const sent = writes((yield* sandbox.control.requests).slice(mark)).map((w) =>
          `${w.method} ${w.path} ${w.status}`
        )
        assert.deepStrictEqual(sent, ["POST /v2/webhooks 201"])

        // The webhook already there, given again with its own URL, is unchanged and sends nothing.
        const again = yield* importInto(sandbox, {
          resource: "webhooks",
          file: put(dir, "w3.csv", "entity;action;targetUrl;active\nTask;Inclusao;https://example.com.br/a;true\n"),
          runDir: Path.join(dir, "w3")
        })
        assert.deepStrictEqual(rowStatuses(readReport(again.runDir)), ["2:unchanged"])
        const stored = yield* sandbox.control.records("sandbox-key", "webhooks")
        assert.deepStrictEqual(stored.map((w) => `${w.entity} ${w.urlResponse}`).sort(), [
          "4 https://example.com.br/a", // Task
          "7 https://example.com.br/c" // Customer
        ])
      })
  )
})
