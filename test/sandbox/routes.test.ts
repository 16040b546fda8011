import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { session } from "./harness.js"

// Every method/path pair of the binding spec (field-service-api-v2.md, "Endpoints"), with 1 for each {id}.
const specPairs = `
POST /login
GET /login
GET /users|POST /users|PUT /users|GET /users/1|PATCH /users/1|DELETE /users/1
GET /customers|POST /customers|PUT /customers|GET /customers/1|PATCH /customers/1|DELETE /customers/1
POST /customers/complete|PUT /customers/complete|PUT /customers/1/attachments
GET /customergroups|POST /customergroups|GET /customergroups/1/clients|DELETE /customergroups/1
GET /products|POST /products|PUT /products|GET /products/1|PATCH /products/1|DELETE /products/1
PUT /products/1/attachments|PUT /products/employee-product-stock
GET /productcategories|POST /productcategories|PUT /productcategories|GET /productcategories/1|PATCH /productcategories/1|DELETE /productcategories/1
GET /services|POST /services|PUT /services|GET /services/1|PATCH /services/1|DELETE /services/1|GET /services/obterListaServicos
GET /equipments|POST /equipments|PUT /equipments|GET /equipments/1|PATCH /equipments/1|DELETE /equipments/1|PUT /equipments/1/attachments
GET /equipmentcategories|POST /equipmentcategories|GET /equipmentcategories/1|PATCH /equipmentcategories/1|DELETE /equipmentcategories/1
GET /keywords|POST /keywords|GET /keywords/1|PATCH /keywords/1|DELETE /keywords/1
GET /expensetypes|POST /expensetypes|GET /expensetypes/1|PATCH /expensetypes/1|DELETE /expensetypes/1
GET /segments|POST /segments|GET /segments/1|PATCH /segments/1|DELETE /segments/1
GET /tasktypes/1
GET /tasks|POST /tasks|PUT /tasks|GET /tasks/1|PATCH /tasks/1|DELETE /tasks/1
PUT /tasks/1/attachments|PUT /tasks/1/products|DELETE /tasks/1/products|PUT /tasks/1/services|DELETE /tasks/1/services
PUT /tasks/1/additional-costs|DELETE /tasks/1/additional-costs|PUT /tasks/1/questionnaire-response|GET /tasks/GetDeletedTasks
GET /expenses|POST /expenses|GET /expenses/1|PATCH /expenses/1|DELETE /expenses/1|PUT /expenses/1/attachments
GET /tickets|POST /tickets|GET /tickets/1|PATCH /tickets/1|GET /tickets/request-type
GET /receivables|POST /receivables|GET /receivables/1|PUT /receivables/1
GET /serviceorders|POST /serviceorders|GET /serviceorders/1|PATCH /serviceorders/1
GET /teams|POST /teams|GET /teams/1|GET /teams/1/users
GET /additionalcosts|POST /additionalcosts|PUT /additionalcosts/1
GET /webhooks|POST /webhooks|GET /webhooks/1|DELETE /webhooks/1
`
  .split(/[|\n]/)
  .map((s) => s.trim())
  .filter((s) => s !== "")
  .map((s) => s.split(" ") as [string, string])

describe("sandbox: routes", () => {
  it.scopedLive("every method/path pair of the spec exists; other methods answer 405 and other paths 404", () =>
    Effect.gen(function*() {
      const { call } = yield* session({ rate: { limit: 10_000, windowMs: 60_000 } })
      assert.strictEqual(specPairs.length, 115) // the 105 rows of the spec, with the shared /<collection> rows written out for its three collections
      for (const [method, path] of specPairs) {
        const body = method === "GET"
          ? undefined
          : method === "PATCH" || path.endsWith("products") || path.endsWith("services") || path.endsWith("costs")
          ? []
          : {}
        const a = yield* call(method, path, body === undefined ? {} : { body })
        assert.notStrictEqual(a.status, 405, `${method} ${path}`)
        if (a.status === 404) assert.notMatch(a.body.error, /^no endpoint/, `${method} ${path}`)
      }
      assert.strictEqual((yield* call("DELETE", "/tickets/1")).status, 405)
      assert.strictEqual((yield* call("PUT", "/equipmentcategories", { body: {} })).status, 405)
      assert.strictEqual((yield* call("GET", "/tasktypes")).status, 200) // the Blueprint's task-type list
      assert.match((yield* call("GET", "/nothing/here")).body.error, /^no endpoint/)
    }))
})
