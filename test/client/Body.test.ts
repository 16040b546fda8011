import { describe, expect, it } from "@effect/vitest"
import { errorMessage, isRateLimit, listPage, parseBody, resultOf } from "../../src/client/Body.js"
import { findByKey, lookupFor, patchApplied, resourceOfPath } from "../../src/client/Reconcile.js"
import { resource } from "../../src/Resources.js"

describe("reading answers", () => {
  it("takes the error message from error, then message, then the first model-state entry", () => {
    expect(errorMessage(422, { error: "name is required" })).toBe("name is required")
    expect(errorMessage(400, { message: "Bad thing", errorCode: 0 })).toBe("Bad thing")
    expect(errorMessage(400, { login: ["The value 'x' is not valid."] })).toBe("login: The value 'x' is not valid.")
    expect(
      errorMessage(400, { title: "One or more validation errors occurred.", errors: { taskDate: ["Invalid date"] } })
    ).toBe(
      "taskDate: Invalid date"
    )
    expect(errorMessage(502, parseBody("<html><body>Bad Gateway</body></html>"))).toBe(
      "HTTP 502: <html><body>Bad Gateway</body></html>"
    )
    expect(errorMessage(500, undefined)).toBe("HTTP 500")
  })

  it("tells a rate limit from a permission error", () => {
    expect(isRateLimit(403, "{\"error\":\"Rate limit temporarily exceeded\"}")).toBe(true)
    expect(isRateLimit(429, "")).toBe(true)
    expect(isRateLimit(403, "{\"error\":\"Forbidden: not allowed\"}")).toBe(false)
    expect(isRateLimit(500, "rate limit")).toBe(false)
  })

  it("reads list envelopes, bare arrays and the nextPage link", () => {
    const paged = listPage({ result: { entityList: [{ id: 1 }], links: [{ rel: "self" }, { rel: "nextPage" }] } })
    expect(paged).toEqual({ records: [{ id: 1 }], nextLink: true, paged: true })
    expect(listPage({ result: { entityList: [{ id: 1 }], links: [{ rel: "self" }] } })?.nextLink).toBe(false)
    expect(listPage({ result: { entityList: [] } })?.nextLink).toBeUndefined()
    expect(listPage({ result: [{ id: 1 }, { id: 2 }] })).toEqual({
      records: [{ id: 1 }, { id: 2 }],
      nextLink: undefined,
      paged: false
    })
    expect(listPage({ result: { id: 1 } })).toBeUndefined()
    expect(resultOf({ result: 5 })).toBe(5)
    expect(resultOf([1])).toEqual([1])
  })
})

describe("reconciliation rules", () => {
  it("finds a record by its correlation key through the resource's filter and read-back name", () => {
    expect(lookupFor(resource("customers"), "externalId")).toEqual({ filterKey: "externalId", property: "externalId" })
    expect(lookupFor(resource("services"), "externalCode")).toEqual({
      filterKey: "externalCode",
      property: "externalCode"
    })
    // The customers filter `description` tests the written `name`, which is read back as `description`.
    expect(lookupFor(resource("customers"), "name")).toEqual({ filterKey: "description", property: "description" })
    expect(lookupFor(resource("webhooks"), "targetUrl")).toEqual({ filterKey: undefined, property: "urlResponse" })
    const records = [{ externalId: "A-1" }, { externalId: "b-2" }]
    expect(findByKey(records, { filterKey: "externalId", property: "externalId" }, "B-2 ")).toBe(records[1])
    expect(findByKey(records, { filterKey: "externalId", property: "externalId" }, "C-3")).toBeUndefined()
  })

  it("compares a PATCH with the re-read record, read-back names and pt-BR money included", () => {
    const customers = resource("customers")
    const record = { id: 1, description: "Padaria", unitaryValue: "12,00", active: true }
    expect(patchApplied([{ op: "replace", path: "/name", value: "Padaria" }], record, customers)).toBe(true)
    expect(patchApplied([{ op: "replace", path: "name", value: "Outra" }], record, customers)).toBe(false)
    expect(patchApplied([{ op: "replace", path: "unitaryValue", value: 12 }], record, undefined)).toBe(true)
    expect(patchApplied([{ op: "remove", path: "note" }], record, customers)).toBe(true)
    expect(patchApplied([{ op: "move", from: "a", path: "b" }], record, customers)).toBeUndefined()
    expect(patchApplied({ active: true }, record, customers)).toBe(true)
    expect(resourceOfPath("/Customers/12")?.name).toBe("customers")
    expect(resourceOfPath("/nothing/1")).toBeUndefined()
  })
})
