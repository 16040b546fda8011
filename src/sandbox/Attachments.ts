/**
 * PUT `/<parent>/{id}/attachments`: `[{name, file}]` (or one object), `file` in base64. Each file is checked
 * (valid base64, at most 10 MiB decoded) and kept on the parent record as `{name, size, sha256}`; a file with
 * the name of one already attached replaces it.
 */
import { createHash } from "node:crypto"
import { Effect } from "effect"
import type { Resource } from "../Resources.js"
import { resource } from "../Resources.js"
import type { Call } from "./Call.js"
import { collectionProperty } from "./Collections.js"
import { checkValues, coerce, isUnset } from "./Fields.js"
import { findOr404 } from "./Records.js"
import type { Rec } from "./Store.js"
import { sameText } from "./Store.js"
import type { Outcome } from "./Wire.js"
import { reject, result } from "./Wire.js"
import { eachItem, itemsOf } from "./Tasks.js"

export const maxAttachmentBytes = 10 * 1024 * 1024

const decodeBase64 = (text: string): Buffer | undefined => {
  const compact = text.replace(/\s+/g, "")
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined
  return Buffer.from(compact, "base64")
}

export const putAttachments = Effect.fn("Attachments.putAttachments")(function* (action: Resource, call: Call) {
  const parent = resource(action.parent!.resource)
  const owner = yield* findOr404(call.account, parent, call.id)
  const fields = action.fields.filter((f) => f.name !== action.parent!.field)
  const fileField = fields.find((f) => f.type._tag === "file")!
  const property = collectionProperty(action)
  const attached = [...((owner[property] as Array<Rec> | undefined) ?? [])]
  const files = yield* eachItem(yield* itemsOf(call.body), (item) =>
    Effect.gen(function* () {
      const { [action.parent!.field]: _parentId, ...rest } = item
      const coerced = yield* coerce(fields, rest)
      yield* checkValues(fields, coerced)
      const bytes = decodeBase64(coerced[fileField.name] as string)
      if (bytes === undefined) return yield* reject(400, `field "${fileField.name}" is not valid base64`)
      if (bytes.length > maxAttachmentBytes) return yield* reject(400, "attachment too large")
      const name = isUnset(coerced["name"]) ? `anexo-${attached.length + 1}` : String(coerced["name"])
      return { name, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }
    })
  )
  for (const file of files) {
    const at = attached.findIndex((a) => sameText(a["name"], file.name))
    if (at >= 0) attached[at] = file
    else attached.push(file)
  }
  call.account.insert(parent.name, { ...owner, [property]: attached })
  return result(200, attached, true) satisfies Outcome as Outcome
})
