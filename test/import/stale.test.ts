/**
 * The stale-edit check in isolation: server changes against the export's fingerprint, the file's changes, and
 * what `stop`, `merge` and `overwrite` make of them; conflict messages group as one kind in reports.
 */
import { assert, describe, it } from "@effect/vitest"
import { errorKind } from "../../src/console/ErrorKinds.js"
import { fingerprintOf } from "../../src/export/Fingerprint.js"
import { staleness } from "../../src/import/Stale.js"
import { resource } from "../../src/Resources.js"

const customers = resource("customers")
const exported = {
  id: 7,
  externalId: "K-1",
  description: "Alfa",
  email: ["alfa@x.com"],
  note: "n1",
  dateLastUpdate: "2026-11-01T10:00:00"
}
const base = fingerprintOf(customers, exported)!
const row = { externalId: "K-1", name: "Alfa", email: "alfa@x.com", note: "n1" }

describe("staleness", () => {
  it("a server edit in the second of the export (the same dateLastUpdate) is still a conflict", () => {
    const sameSecond = { ...exported, email: ["alfa@server.com"] }
    const stop = staleness(customers, { ...row, note: "n1 in the file" }, sameSecond, base, "stop")
    assert.strictEqual(stop._tag, "Conflict")
    assert.include((stop as { error: string }).error, "changed on the server since the export: \"email\"")
  })

  it("a record as exported is clear, whatever the file changed and whatever its dateLastUpdate says", () => {
    assert.strictEqual(base.k, "k-1")
    assert.deepStrictEqual(staleness(customers, { ...row, note: "new" }, exported, base, "stop"), { _tag: "Clear" })
    // Values written back in another form (a pt-BR list, other case of the key) are not a change.
    assert.strictEqual(
      staleness(customers, row, { ...exported, externalId: "k-1", dateLastUpdate: "2026-11-02T00:00:00" }, base, "stop")
        ._tag,
      "Clear"
    )
  })

  it("a server change is a conflict naming both sides; merge keeps disjoint fields; overwrite clears", () => {
    const server = { ...exported, email: ["alfa@server.com"], dateLastUpdate: "2026-11-03T00:00:00" }
    const file = { ...row, note: "n1 in the file" }
    const stop = staleness(customers, file, server, base, "stop")
    assert.strictEqual(stop._tag, "Conflict")
    assert.include((stop as { error: string }).error, "changed on the server since the export: \"email\"")
    assert.include((stop as { error: string }).error, "changed in the file: \"note\"")
    assert.deepStrictEqual(staleness(customers, file, server, base, "merge"), {
      _tag: "Merge",
      fields: ["note"],
      kept: ["email"]
    })
    const both = staleness(customers, { ...file, email: "alfa@file.com" }, server, base, "merge")
    assert.strictEqual(both._tag, "Conflict")
    assert.include(
      (both as { error: string }).error,
      "changed on the server and in the file since the export: \"email\""
    )
    assert.deepStrictEqual(staleness(customers, file, server, base, "overwrite"), { _tag: "Clear" })
    assert.deepStrictEqual(staleness(customers, file, server, undefined, "stop"), { _tag: "Clear" })
  })

  it("nested objects are fingerprinted: an edit of a contact or a specification is a conflict, their order is not", () => {
    const contacts = [
      { name: "Ana", jobPosition: "Gerente", email: "ana@x.com", phone: "11 9999-0000" },
      { name: "Bruno", email: "bruno@x.com" }
    ]
    const withContacts = { ...exported, contacts }
    const fp = fingerprintOf(customers, withContacts)!
    assert.isDefined(fp.f["contacts"])
    const edited = { ...withContacts, contacts: [contacts[0], { ...contacts[1], email: "bruno@server.com" }] }
    const stop = staleness(customers, row, edited, fp, "stop")
    assert.strictEqual(stop._tag, "Conflict")
    assert.include((stop as { error: string }).error, "changed on the server since the export: \"contacts\"")
    // The same contacts in another order, with the server's own ids and property case: not a change.
    const reordered = {
      ...withContacts,
      contacts: [{ Name: "Bruno", email: "bruno@x.com", id: 92 }, { ...contacts[0], id: 91 }]
    }
    assert.deepStrictEqual(staleness(customers, row, reordered, fp, "stop"), { _tag: "Clear" })
    // A contact removed on the server.
    assert.strictEqual(
      staleness(customers, row, { ...withContacts, contacts: [contacts[0]] }, fp, "stop")._tag,
      "Conflict"
    )

    const equipments = resource("equipments")
    const specs = [{ name: "Capacidade", specification: "12000 BTU" }, { name: "Tensão", specification: "220 V" }]
    const equipment = { id: 3, externalId: "EQ-1", name: "Split", equipmentSpecifications: specs }
    const eqBase = fingerprintOf(equipments, equipment)!
    const changed = { ...equipment, equipmentSpecifications: [specs[0], { ...specs[1], specification: "110 V" }] }
    const eqStop = staleness(equipments, { externalId: "EQ-1", name: "Split" }, changed, eqBase, "stop")
    assert.strictEqual(eqStop._tag, "Conflict")
    assert.include((eqStop as { error: string }).error, "\"equipmentSpecifications\"")
    const swapped = { ...equipment, equipmentSpecifications: [specs[1], specs[0]] }
    assert.deepStrictEqual(staleness(equipments, { externalId: "EQ-1" }, swapped, eqBase, "stop"), { _tag: "Clear" })
  })

  it("conflicts on different fields are one kind of error in the reports", () => {
    const later = { ...exported, dateLastUpdate: "2026-11-05T00:00:00" }
    const a = staleness(customers, { ...row, note: "x" }, { ...later, email: ["b@x.com"] }, base, "stop")
    const b = staleness(customers, { ...row, email: "c@x.com" }, { ...later, description: "Beta" }, base, "stop")
    assert.strictEqual(errorKind((a as { error: string }).error), errorKind((b as { error: string }).error))
  })
})
