/**
 * `sandbox --seed EXPORT_DIR [--public-key PUB]` on a signed export: the copy is started only when the export's
 * `manifest.sig` holds (by the key given, when one is), and says whether the export was signed and by whom.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { loadPublicKey, loadSigningKey, newKeyPair } from "../../src/evidence/Keys.js"
import { sealExport } from "../../src/evidence/Seal.js"
import { readExportCopy } from "../../src/export/Copy.js"
import { startTestSandbox, tempDir } from "../import/support.js"
import { exportTo, seed } from "../plan/support.js"

describe("sandbox --seed of a signed export", () => {
  it.scopedLive(
    "seeds from an export signed by the key given; refuses another key, an unsigned export with --public-key",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir
        const account = yield* startTestSandbox()
        yield* seed(account, dir)
        const signedDir = Path.join(dir, "assinada")
        const unsignedDir = Path.join(dir, "sem-assinatura")
        yield* exportTo(account, signedDir)
        yield* exportTo(account, unsignedDir)
        const mine = yield* newKeyPair(Path.join(dir, "keys"))
        const theirs = yield* newKeyPair(Path.join(dir, "outras"))
        yield* sealExport(signedDir, "manifest.json", yield* loadSigningKey(mine.privateKey))

        const good = yield* readExportCopy(signedDir, yield* loadPublicKey(mine.publicKey))
        assert.deepStrictEqual(good.signature, { status: "valid", keyId: mine.keyId, trusted: true })
        assert.strictEqual(good.resources.find((r) => r.name === "customers")?.records.length, 3)
        const noKey = yield* readExportCopy(signedDir)
        assert.strictEqual(noKey.signature?.status, "valid")
        assert.strictEqual(noKey.signature?.trusted, false)
        assert.strictEqual((yield* readExportCopy(unsignedDir)).signature?.status, "unsigned")

        const other = yield* Effect.flip(readExportCopy(signedDir, yield* loadPublicKey(theirs.publicKey)))
        assert.include(other.message, "manifest.sig is signed by key")
        assert.include(other.message, "refused")
        const unsigned = yield* Effect.flip(readExportCopy(unsignedDir, yield* loadPublicKey(mine.publicKey)))
        assert.include(unsigned.message, "the export is unsigned")
      }).pipe(Effect.provide(NodeContext.layer)),
    120_000
  )
})
