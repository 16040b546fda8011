/**
 * What each row's write is (`src/import/WritePlan.ts` `plan`), case by case without HTTP: per mode, per what the
 * resource's API can do, per what the lookup found, after an interruption and against an export's fingerprint.
 * The import tests reach the same rules through the sandbox.
 */
import { describe, expect, it } from "vitest"
import { fingerprintOf } from "../../src/export/Fingerprint.js"
import type { Existing } from "../../src/import/WritePlan.js"
import { plan } from "../../src/import/WritePlan.js"
import { type Resource, resource } from "../../src/Resources.js"

type Input = Parameters<typeof plan>[0]

const customers = resource("customers")
const segments = resource("segments")
const costs = resource("additional-costs")
const teams = resource("teams")
const taskProducts = resource("task-products")
const users = resource("users")

const row = (payload: Record<string, unknown>, key?: string, id?: number) => ({
  row: 2,
  payload,
  key,
  id,
  files: []
})
const found = (...records: Array<Record<string, unknown>>): Existing => ({
  _tag: "Found",
  records,
  by: "externalId",
  value: "C-1"
})
const none = found()
const notLooked: Existing = { _tag: "NotLooked" }
const unavailable: Existing = { _tag: "Unavailable", message: "HTTP 503" }

const ana = { externalId: "C-1", name: "Ana" }
const anaOnServer = { id: 7, externalId: "C-1", name: "Ana" }
const bia = { id: 7, externalId: "C-1", name: "Bia" }
const baseOf = (r: Resource, record: Record<string, unknown>) => fingerprintOf(r, record)

const input = (
  r: Resource,
  mode: Input["mode"],
  ready: Input["row"],
  existing: Existing,
  over: Partial<Input> = {}
): Input => ({ resource: r, mode, dryRun: false, row: ready, existing, interrupted: undefined, ...over })

const failed = (error: string) => ({ _tag: "Settle", outcome: { status: "failed", error } })

const cases: ReadonlyArray<readonly [string, Input, unknown]> = [
  // create
  [
    "create: a key not on the server is a POST with its correlation",
    input(customers, "create", row(ana, "C-1"), none),
    {
      _tag: "Post",
      body: ana,
      correlation: { key: "externalId", value: "C-1" }
    }
  ],
  ["create: nothing looked up is a POST", input(customers, "create", row(ana, "C-1"), notLooked), { _tag: "Post" }],
  [
    "create: a row without a key is a POST without correlation",
    input(customers, "create", row({ name: "Ana" }), none),
    {
      _tag: "Post",
      correlation: undefined
    }
  ],
  [
    "create: a key already on the server is refused without a request",
    input(customers, "create", row(ana, "C-1"), found(anaOnServer)),
    failed("already exists (externalId \"C-1\", id 7): use --mode upsert")
  ],
  [
    "create: two records with the key are a duplicate to resolve",
    input(customers, "create", row(ana, "C-1"), found(anaOnServer, { ...anaOnServer, id: 8 })),
    failed("2 customers records on the server have externalId \"C-1\": resolve the duplicate first")
  ],
  [
    "create: a lookup that failed fails the row",
    input(customers, "create", row(ana, "C-1"), unavailable),
    failed("could not look existing customers records up: HTTP 503")
  ],
  // upsert through the API's own upsert
  ["upsert (API): an absent key is a PUT on the collection", input(customers, "upsert", row(ana, "C-1"), none), {
    _tag: "PutCollection",
    path: "/customers",
    body: ana,
    existed: false,
    changes: []
  }],
  ["upsert (API): without a lookup, existed is unknown", input(customers, "upsert", row(ana, "C-1"), notLooked), {
    _tag: "PutCollection",
    existed: undefined
  }],
  [
    "upsert (API): an equal record is unchanged, nothing sent",
    input(customers, "upsert", row(ana, "C-1"), found(anaOnServer)),
    { _tag: "Settle", outcome: { status: "unchanged", recordId: 7 } }
  ],
  [
    "upsert (API): a changed record is a PUT with its changes",
    input(customers, "upsert", row(ana, "C-1"), found(bia)),
    {
      _tag: "PutCollection",
      existed: true,
      changes: [{ field: "name", from: "Bia", to: "Ana" }]
    }
  ],
  [
    "upsert (API): an equal record after an interrupted upsert that found it absent was created by that run",
    input(customers, "upsert", row(ana, "C-1"), found(anaOnServer), {
      interrupted: "upsert",
      interruptedAbsent: true
    }),
    {
      _tag: "Settle",
      outcome: {
        status: "created",
        recordId: 7,
        error: "reconciled after an interruption: the server already holds this row"
      }
    }
  ],
  [
    "upsert (API): a record found equal but for its password is unchanged: an update leaves the password out",
    input(
      users,
      "upsert",
      row({ externalId: "U-1", name: "Ana", password: "s3cret" }, "U-1"),
      found({ id: 3, externalId: "U-1", name: "Ana" })
    ),
    { _tag: "Settle", outcome: { status: "unchanged", recordId: 3 } }
  ],
  [
    "upsert (API): with --send-write-only a password that cannot be read back is sent though the rest is equal",
    input(
      users,
      "upsert",
      row({ externalId: "U-1", name: "Ana", password: "s3cret" }, "U-1"),
      found({ id: 3, externalId: "U-1", name: "Ana" }),
      { sendWriteOnly: true }
    ),
    { _tag: "PutCollection", existed: true, changes: [] }
  ],
  [
    "upsert (API): a record found leaves the password out of the update",
    input(
      users,
      "upsert",
      row({ externalId: "U-1", name: "Bia", password: "s3cret" }, "U-1"),
      found({ id: 3, externalId: "U-1", name: "Ana" })
    ),
    { _tag: "PutCollection", body: { externalId: "U-1", name: "Bia" } }
  ],
  [
    "upsert (API): --send-write-only keeps the password in the update",
    input(
      users,
      "upsert",
      row({ externalId: "U-1", name: "Bia", password: "s3cret" }, "U-1"),
      found({ id: 3, externalId: "U-1", name: "Ana" }),
      { sendWriteOnly: true }
    ),
    { _tag: "PutCollection", body: { externalId: "U-1", name: "Bia", password: "s3cret" } }
  ],
  // upsert emulated by the lookup
  [
    "upsert (emulated): an absent key is a POST",
    input(segments, "upsert", row({ description: "Varejo" }, "Varejo"), none),
    { _tag: "Post", correlation: { key: "description", value: "Varejo" } }
  ],
  [
    "upsert (emulated): a record found with other fields is a PATCH of them",
    input(
      segments,
      "upsert",
      row({ description: "Varejo", active: false }, "Varejo"),
      found({ id: 4, description: "Varejo", active: true })
    ),
    { _tag: "Patch", id: 4, changes: [{ field: "active", from: true, to: false }] }
  ],
  [
    "upsert (emulated, PUT by id): a changed record is a PUT /{id} without its key",
    input(
      costs,
      "upsert",
      row({ name: "Deslocamento", value: 40 }, "Deslocamento"),
      found({
        id: 9,
        name: "Deslocamento",
        value: 35
      })
    ),
    { _tag: "PutId", id: 9, body: { name: "Deslocamento", value: 40 } }
  ],
  [
    "upsert (emulated): a resource that cannot be changed fails naming the change",
    input(
      teams,
      "upsert",
      row({ description: "Norte", active: false }, "Norte"),
      found({
        id: 2,
        description: "Norte",
        active: true
      })
    ),
    failed("the API cannot change an existing teams record (would change active: true → false)")
  ],
  [
    "upsert (emulated): an id that names no record is not created again",
    input(segments, "upsert", row({ id: 4, description: "Varejo" }, undefined, 4), {
      _tag: "Found",
      records: [],
      by: "id",
      value: "4"
    }),
    failed("no segments record with id \"4\" (leave the id empty to create the record)")
  ],
  // sub-collections
  [
    "upsert (sub-collection): a PUT on the parent's path without the parent field",
    input(taskProducts, "upsert", row({ taskId: 12, productId: 5, quantity: 2 }, "5"), notLooked),
    { _tag: "PutPath", path: "/tasks/12/products", body: { productId: 5, quantity: 2 } }
  ],
  [
    "upsert (sub-collection): without its parent the row fails",
    input(taskProducts, "upsert", row({ productId: 5, quantity: 2 }, "5"), notLooked),
    failed("taskId: the tasks record is not given")
  ],
  [
    "upsert (sub-collection): an item the parent holds with the row's values is unchanged, not sent",
    input(
      taskProducts,
      "upsert",
      row({ taskId: 12, productId: 5, quantity: 2 }, "5"),
      found({ productId: 5, quantity: "2,00", value: "49,90" })
    ),
    { _tag: "Settle", outcome: { status: "unchanged" } }
  ],
  [
    "upsert (sub-collection): an item the parent holds with other values is sent",
    input(
      taskProducts,
      "upsert",
      row({ taskId: 12, productId: 5, quantity: 3 }, "5"),
      found({ productId: 5, quantity: 2 })
    ),
    { _tag: "PutPath", path: "/tasks/12/products", body: { productId: 5, quantity: 3 }, files: [] }
  ],
  [
    "upsert (sub-collection): a PUT of an earlier session found landed is updated, not sent again",
    input(
      taskProducts,
      "upsert",
      row({ taskId: 12, productId: 5, quantity: 2 }, "5"),
      found({ productId: 5, quantity: 2 }),
      {
        interrupted: "put"
      }
    ),
    {
      _tag: "Settle",
      outcome: { status: "updated", error: "reconciled after an interruption: the server already holds this row" }
    }
  ],
  [
    "upsert (sub-collection): a parent that cannot be read fails the row unsent",
    input(taskProducts, "upsert", row({ taskId: 12, productId: 5, quantity: 2 }, "5"), unavailable),
    failed("could not look existing task-products records up: HTTP 503")
  ],
  [
    "delete (sub-collection): a DELETE of the item's key on the parent's path",
    input(taskProducts, "delete", row({ taskId: 12, productId: 5 }, "5"), notLooked),
    { _tag: "DeletePath", path: "/tasks/12/products", body: [5] }
  ],
  // update
  [
    "update: a changed record is a PATCH of what changed",
    input(customers, "update", row(ana, "C-1"), found(bia)),
    { _tag: "Patch", id: 7, changes: [{ field: "name", from: "Bia", to: "Ana" }] }
  ],
  ["update: an equal record is unchanged", input(customers, "update", row(ana, "C-1"), found(anaOnServer)), {
    _tag: "Settle",
    outcome: { status: "unchanged", recordId: 7 }
  }],
  [
    "update: an absent key fails, never creates",
    input(customers, "update", row(ana, "C-1"), none),
    failed("no customers record with externalId \"C-1\"")
  ],
  [
    "update by id without a lookup: a PATCH of every given field",
    input(customers, "update", row({ id: 7, name: "Ana" }, undefined, 7), notLooked),
    { _tag: "Patch", id: 7, changes: [{ field: "name", from: undefined, to: "Ana" }] }
  ],
  [
    "update without id or key fails naming the columns",
    input(customers, "update", row({ name: "Ana" }), notLooked),
    failed("update needs the id or the externalId column")
  ],
  [
    "update: a record changed on the server since the export is a conflict",
    input(customers, "update", row(ana, "C-1"), found(bia), { base: baseOf(customers, anaOnServer) }),
    {
      _tag: "Settle",
      outcome: {
        status: "conflict",
        recordId: 7,
        error:
          "changed on the server since the export: \"name\"; changed in the file: nothing; nothing was sent (--merge applies the file's changes to other fields, --overwrite sends the file's values)"
      }
    }
  ],
  [
    "update: --overwrite sends the file's values over the server's change",
    input(customers, "update", row(ana, "C-1"), found(bia), {
      base: baseOf(customers, anaOnServer),
      onConflict: "overwrite"
    }),
    { _tag: "Patch", id: 7 }
  ],
  [
    "update: --merge keeps the server's change and sends the file's others",
    input(customers, "update", row({ ...ana, city: "Recife" }, "C-1"), found({ ...bia, city: "Natal" }), {
      base: baseOf(customers, { ...bia, city: "Natal", name: "Ana" }),
      onConflict: "merge"
    }),
    { _tag: "Patch", id: 7, changes: [{ field: "city", from: "Natal", to: "Recife" }] }
  ],
  [
    "update: a record deleted since the export is a conflict",
    input(customers, "update", row(ana, "C-1"), none, { base: baseOf(customers, anaOnServer) }),
    {
      _tag: "Settle",
      outcome: {
        status: "conflict",
        error:
          "deleted on the server since the export (no customers record with externalId \"C-1\" now); nothing was sent (--overwrite creates it again)"
      }
    }
  ],
  // delete
  ["delete: the record the key found is deleted by its id", input(customers, "delete", row(ana, "C-1"), found(bia)), {
    _tag: "Delete",
    id: 7
  }],
  ["delete: by id without a lookup", input(customers, "delete", row({ id: 7 }, undefined, 7), notLooked), {
    _tag: "Delete",
    id: 7
  }],
  [
    "delete: an absent key fails",
    input(customers, "delete", row(ana, "C-1"), none),
    failed("no customers record with externalId \"C-1\"")
  ],
  [
    "delete: an absent key after an interrupted delete was that run's",
    input(customers, "delete", row(ana, "C-1"), none, { interrupted: "delete" }),
    { _tag: "Settle", outcome: { status: "deleted", error: "reconciled after an interruption: the record is gone" } }
  ],
  // a create interrupted before its answer
  [
    "interrupted create: the record found, proven absent before and equal, was created by that run",
    input(customers, "create", row(ana, "C-1"), found(anaOnServer), { interrupted: "create", interruptedAbsent: true }),
    {
      _tag: "Settle",
      outcome: {
        status: "created",
        recordId: 7,
        error: "reconciled after an interruption: the server already holds this row"
      }
    }
  ],
  [
    "interrupted create: a record found without the proof is in doubt",
    input(customers, "upsert", row(ana, "C-1"), found(anaOnServer), { interrupted: "create" }),
    {
      _tag: "Settle",
      outcome: {
        status: "in-doubt",
        error:
          "the run stopped while this row was being created; a customers record with externalId \"C-1\" is on the server (id 7), but nothing shows this run created it (no read before the request found the key absent): not counted as created, and undo leaves it; check it, then rerun the row"
      }
    }
  ],
  [
    "interrupted create: a record found that holds other values is in doubt",
    input(customers, "create", row(ana, "C-1"), found(bia), { interrupted: "create", interruptedAbsent: true }),
    { _tag: "Settle", outcome: { status: "in-doubt" } }
  ],
  [
    "interrupted create: no record found is created now",
    input(customers, "create", row(ana, "C-1"), none, { interrupted: "create" }),
    { _tag: "Post" }
  ],
  [
    "interrupted create: a resource that cannot be looked up is in doubt",
    input(customers, "create", row(ana, "C-1"), notLooked, { interrupted: "create" }),
    {
      _tag: "Settle",
      outcome: {
        status: "in-doubt",
        error:
          "the run stopped while this row was being created, and customers records cannot be looked up by a key: check the server, then rerun the row"
      }
    }
  ]
]

describe("what each row's write is", () => {
  it.each(cases)("%s", (_, given, expected) => {
    expect(plan(given)).toMatchObject(expected as object)
  })
})
