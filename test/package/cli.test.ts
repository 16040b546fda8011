/**
 * The npm package holds the program and its documentation only (issue 28): `files` in package.json is a
 * whitelist, so a user's walkthrough files, run directories, exports or the tests never ship.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { root } from "../import/support.js"
import { spawned } from "../spawned.js"

describe("the npm package", () => {
  it(
    "npm pack lists dist (with the man page), templates, docs, schemas, README and package.json only: no test, no customer file",
    () =>
      Effect.gen(function*() {
        const pack = yield* spawned("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: root })
        assert.strictEqual(pack.status, 0, pack.stderr)
        const out = pack.stdout
        const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path)
        assert.include(files, "dist/bin.js")
        assert.include(files, "templates/customers.csv")
        assert.include(files, "dist/fsm-bulk.1")
        assert.include(files, "schemas/mapping-profile.schema.json")
        const allowed = /^(dist\/|templates\/|docs\/|schemas\/|README\.md$|package\.json$|LICENSE)/
        const stray = files.filter((f) => !allowed.test(f))
        assert.deepStrictEqual(stray, [], "files outside the whitelist")
        assert.isFalse(files.some((f) => /^(test|runs|trial|my-files|my-export)\//.test(f)))
      }).pipe(Effect.runPromise),
    120_000
  )
})
