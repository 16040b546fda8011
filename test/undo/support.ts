/**
 * Helpers of the undo tests: the import helpers (sandbox, client, files, reports), an undo run in process, and the
 * account's records as the sandbox holds them, for comparisons record by record.
 */
import { Effect } from "effect"
import type { ResourceName } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { runUndo, type UndoRequest } from "../../src/undo/Undo.js"
import { apiOf } from "../import/support.js"

export * from "../import/support.js"

export const undoIn = (
  sandbox: RunningSandbox,
  request: Pick<UndoRequest, "target" | "runDir"> & Partial<UndoRequest>
) => runUndo({ dryRun: false, force: false, ...request }).pipe(Effect.provide(apiOf(sandbox)))

/**
 * The account's records of `resource`, keyed by `key`, every field but those the server sets on each write: the
 * id (a record created again gets a new one) and the creation and last-update times.
 */
export const recordsByKey = (sandbox: RunningSandbox, resource: ResourceName, key = "externalId") =>
  Effect.map(sandbox.control.records(sandbox.accounts[0]!.apiKey, resource), (records) =>
    Object.fromEntries(
      records.map((r) => {
        const { creationDate: _c, dateLastUpdate: _u, id: _id, ...rest } = r
        return [String(r[key]), rest]
      })
    ))
