/**
 * PUT `/<parent>/{id}/attachments`, in the API's upload forms (the table's `upload`):
 * - tasks, customers, equipments, products: `{"removeAllAttachmentsInsertedByMe": bool, "attachments": [{name, file}]}`;
 * - expenses: `{"deleteAttachment": bool, "attachment": "<base64>"}` — one receipt per expense, no name: a new one
 *   replaces the one it had.
 * Each file is checked (valid base64, at most 10 MiB decoded) and kept on the parent record as
 * `{name, size, sha256}`; a file with the name of one already attached replaces it, and the flag removes the
 * earlier ones first. The answer is 200 with the whole parent record.
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { createHash } from "node:crypto"
import type { Resource } from "../Resources.js"
import { resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { collectionProperty } from "./Collections.js"
import { coerce, isUnset } from "./Fields.js"
import { readBack } from "./ReadBack.js"
import { findOr404 } from "./Records.js"
import type { Rec } from "./Store.js"
import { sameText } from "./Store.js"
import { eachItem } from "./Tasks.js"
import type { Outcome } from "./Wire.js"
import { reject, result } from "./Wire.js"

export const maxAttachmentBytes = 10 * 1024 * 1024

const decodeBase64 = (text: string): Buffer | undefined => {
  const compact = text.replace(/\s+/g, "")
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined
  return Buffer.from(compact, "base64")
}

/** The flag and the files of an upload body, or 400 naming the form expected. */
const uploadOf = Effect.fnUntraced(function*(action: Resource, body: unknown) {
  const upload = action.upload!
  const expected = upload._tag === "single"
    ? `{"${upload.flag}": false, "attachment": "<base64>"}`
    : `{"${upload.flag}": false, "attachments": [{"name": "…", "file": "<base64>"}]}`
  if (!Predicate.isRecord(body)) return yield* reject(400, `the body must be ${expected}`)
  const { [upload.flag]: flag } = yield* coerce([{ name: upload.flag, type: { _tag: "boolean" }, doc: "" }], {
    [upload.flag]: body[upload.flag]
  })
  if (upload._tag === "single") {
    if (typeof body["attachment"] !== "string" || body["attachment"] === "") {
      return yield* reject(400, `field "attachment" is required: the body must be ${expected}`)
    }
    return { flag: flag === true, files: [{ file: body["attachment"] }] as ReadonlyArray<Rec> }
  }
  const list = body["attachments"]
  if (!Array.isArray(list) || list.length === 0 || !list.every(Predicate.isRecord)) {
    return yield* reject(400, `the body must be ${expected}`)
  }
  return { flag: flag === true, files: list as ReadonlyArray<Rec> }
})

export const putAttachments = Effect.fnUntraced(function*(action: Resource, call: Call) {
  const parent = resource(action.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const property = collectionProperty(action)
  const { flag, files } = yield* uploadOf(action, call.body)
  const attached = flag || action.upload!._tag === "single"
    ? []
    : [...((owner[property] as Array<Rec> | undefined) ?? [])]
  const checked = yield* eachItem(files, (item) =>
    Effect.gen(function*() {
      if (typeof item["file"] !== "string" || item["file"] === "") {
        return yield* reject(400, `field "file" is required (the file's bytes in base64)`)
      }
      if (action.upload!._tag === "list" && (typeof item["name"] !== "string" || item["name"].trim() === "")) {
        return yield* reject(400, `field "name" is required (the file name with its extension)`)
      }
      const bytes = decodeBase64(item["file"])
      if (bytes === undefined) {
        return yield* reject(400, `field "file" is not valid base64`)
      }
      if (bytes.length > maxAttachmentBytes) return yield* reject(400, "attachment too large")
      const name = isUnset(item["name"]) ? `anexo-${attached.length + 1}` : String(item["name"])
      return { name, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }
    }))
  for (const file of checked) {
    const at = attached.findIndex((a) => sameText(a["name"], file.name))
    if (at >= 0) attached[at] = file
    else attached.push(file)
  }
  const updated = { ...owner, [property]: attached }
  call.account.insert(parent.name, updated)
  return result(200, readBack(parent, updated), true) satisfies Outcome as Outcome
})
