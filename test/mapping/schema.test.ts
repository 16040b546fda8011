/** The published JSON Schema of mapping profiles is the one the tool decodes with. */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync, writeFileSync } from "node:fs"
import { profileJsonSchema, profileSchemaPath } from "../../src/mapping/Profile.js"

describe("schemas/mapping-profile.schema.json", () => {
  it("is generated from the profile's Schema (FSM_WRITE_SCHEMA=1 rewrites it)", () => {
    const wanted = `${JSON.stringify(profileJsonSchema(), null, 2)}\n`
    if (process.env.FSM_WRITE_SCHEMA === "1") writeFileSync(profileSchemaPath, wanted)
    assert.strictEqual(readFileSync(profileSchemaPath, "utf8"), wanted)
  })
})
