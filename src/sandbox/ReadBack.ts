/**
 * Stored records (write names) turned into what the live service sends back (api-notes "Identifiers and field
 * names that differ between write and read", api-reference §2): the id under its read-back name (`userID`,
 * `taskID`, `code`), renamed fields (customers' `name` → `description`, webhooks' `targetUrl` → `urlResponse`),
 * money as text (`"12,00"` pt-BR, `"12.34"`), the live service's forms of unset values (`""` for text and dates,
 * `0` for a reference, `[]` for a list), and no write-only fields (passwords, upsert flags).
 *
 * `derive` then adds what the service works out from other records or keeps itself: a task's user, customer and
 * task type names, its public URL and its check-in/out and signature properties; users' `userType` object and
 * nested base point; products' GUID and employee stock; names of webhook entities and actions; the record dates.
 */
import type { Field, Resource } from "../Resources.js"
import { idReadName, readName, resource } from "../Resources.js"
import type { CallSettings } from "./Call.js"
import type { Account, Rec } from "./Store.js"
import { idKey, idName } from "./Store.js"

const money = (value: unknown, decimalMark: "," | "."): string => {
  const n = typeof value === "number" ? value : Number(value)
  const text = (Number.isFinite(n) ? n : 0).toFixed(2)
  return decimalMark === "," ? text.replace(".", ",") : text
}

/** The form of an unset value of a field (api-reference §1.13). */
const unsetValue = (field: Field): unknown => {
  if (field.list) return []
  if (field.ref !== undefined && field.type._tag === "integer") return 0
  if (field.zeroWhenUnset === true) return 0
  switch (field.type._tag) {
    case "date":
    case "time":
    case "string":
    case "email":
    case "cpfCnpj":
      return ""
    default:
      return null
  }
}

const readValue = (field: Field, value: unknown): unknown => {
  if (field.readFormat === "ptBrMoney") return money(value ?? 0, ",")
  if (field.readFormat === "dotMoney") return money(value ?? 0, ".")
  if (value === undefined || value === null) return unsetValue(field)
  return value
}

export const readBack = (r: Resource, rec: Rec): Rec => {
  const out: Rec = {}
  const known = new Set<string>()
  if (r.id !== undefined) {
    out[idReadName(r)!] = rec[idName(r)]
    known.add(idName(r))
  }
  for (const field of r.fields) {
    known.add(field.name)
    if (field.writeOnly || (r.id !== undefined && field.name === idName(r))) continue
    out[readName(field)] = readValue(field, rec[field.name])
  }
  for (const [name, value] of Object.entries(rec)) if (!known.has(name) && !(name in out)) out[name] = value
  return out
}

// --- derived properties ---------------------------------------------------------------------------------------

/** What `derive` needs besides the record: the account it belongs to, the switches, the base URL. */
export interface ReadContext {
  readonly account: Account
  readonly settings: Pick<CallSettings, "userIdStyle">
  /** `http://host:port`: public task pages are addressed under it. */
  readonly origin: string
}

/** Properties the service keeps on every record of these resources (api-reference §2). */
const datedResources: ReadonlySet<string> = new Set([
  "tasks",
  "customers",
  "teams",
  "segments",
  "keywords",
  "expense-types",
  "expenses",
  "equipments",
  "webhooks"
])

/**
 * Stamps the dates the service keeps itself on a record being stored: `creationDate` once, `dateLastUpdate` on every
 * write. Only the resources whose records carry them (`datedResources`).
 */
export const stampDates = (r: Resource, rec: Rec, now: string, created: boolean): void => {
  if (!datedResources.has(r.name)) return
  if (created || typeof rec["creationDate"] !== "string" || rec["creationDate"] === "") rec["creationDate"] = now
  rec["dateLastUpdate"] = now
}

/**
 * The GUID the service gives a product besides its numeric code (`productId`, api-reference §2.18): derived from
 * the code, so it stays the same across restarts and needs no storage.
 */
const productGuid = (code: unknown): string => {
  const hex = Number(code).toString(16).padStart(12, "0").slice(-12)
  return `00000000-0000-4000-8000-${hex}`
}

const text = (
  value: unknown
): string => (typeof value === "string" ? value : value === undefined || value === null ? "" : String(value))

/** The property `by` of the record of `name` with id `id`, or `""` when there is none (an unset reference). */
const nameOf = (
  ctx: ReadContext,
  name: "users" | "customers" | "task-types" | "teams" | "expense-types" | "keywords",
  id: unknown,
  by: string
): string => {
  if (id === undefined || id === null || id === 0 || id === "") return ""
  return text(ctx.account.table(name).get(id)?.[by])
}

const enumLabel = (r: Resource, fieldName: string, value: unknown): unknown => {
  const field = r.fields.find((f) => f.name === fieldName)
  if (field?.type._tag !== "enum") return value
  return field.type.values.find((v) => v.value === Number(value))?.label ?? value
}

/** How the live service reads an unset date (api-notes B, Values). */
const unsetDate = "0001-01-01T00:00:00"

const dates = (rec: Rec): Rec => ({
  creationDate: text(rec["creationDate"]),
  dateLastUpdate: text(rec["dateLastUpdate"])
})

/** The totals of a task's items (BP `summary`), from the items the sandbox keeps. */
const taskSummary = (rec: Rec): Rec => {
  const total = (items: unknown, value: (item: Rec) => number) =>
    Array.isArray(items)
      ? items.reduce((sum: number, item: Rec) => sum + (Number.isFinite(value(item)) ? value(item) : 0), 0)
      : 0
  const line = (item: Rec) => Number(item["quantity"] ?? 1) * Number(item["value"] ?? 0)
  const totalProducts = total(rec["products"], line)
  const totalServices = total(rec["services"], line)
  const totalAdditionalCosts = total(rec["additionalCosts"], (item) => Number(item["value"] ?? 0))
  return {
    totalProducts,
    totalServices,
    totalAdditionalCosts,
    totalValue: totalProducts + totalServices + totalAdditionalCosts,
    discount: { value: 0, type: "Valor" }
  }
}

/**
 * A task's questionnaire answers with the Blueprint's read-back names (`itemId`, `questionnaireId`,
 * `questionnaireDescription`; answers' `questionDescription`, `replyId`) next to the names they were written with.
 */
const questionnaireGroups = (groups: unknown, ctx: ReadContext): unknown => {
  if (!Array.isArray(groups)) return []
  return groups.map((group: Rec) => {
    const checklist = group["codigoChecklist"]
    const questionnaire = ctx.account.table("questionnaires").get(checklist)
    const questions = (questionnaire?.["questions"] as Array<Rec> | undefined) ?? []
    const answers = (Array.isArray(group["answers"]) ? group["answers"] : []) as Array<Rec>
    return {
      ...group,
      itemId: text(group["itemID"]),
      questionnaireId: text(checklist),
      questionnaireDescription: text(questionnaire?.["description"]),
      answers: answers.map((answer, i) => ({
        ...answer,
        questionDescription: text(
          questions.find((q) => idKey(q["id"]) === idKey(answer["questionId"]))?.["description"]
        ),
        replyId: i + 1
      }))
    }
  })
}

const derivations: Partial<Record<string, (wire: Rec, rec: Rec, ctx: ReadContext) => Rec>> = {
  tasks: (wire, rec, ctx) => {
    const id = rec[idName(resource("tasks"))]
    const status = Number(rec["taskStatus"] ?? 1)
    const checkedIn = status >= 3 && status !== 6
    const keyWords = (Array.isArray(rec["keyWords"]) ? rec["keyWords"] : []) as Array<unknown>
    return {
      ...wire,
      userFromName: nameOf(ctx, "users", rec["idUserFrom"], "name"),
      userToName: nameOf(ctx, "users", rec["idUserTo"], "name"),
      customerExternalId: nameOf(ctx, "customers", rec["customerId"], "externalId"),
      customerDescription: nameOf(ctx, "customers", rec["customerId"], "name"),
      taskTypeDescription: nameOf(ctx, "task-types", rec["taskType"], "description"),
      taskType: wire["taskType"] ?? 0,
      keyWordsDescriptions: keyWords.map((k) => nameOf(ctx, "keywords", k, "description")),
      deliveredOnSmarthPhone: rec["deliveredOnSmarthPhone"] ?? false,
      deliveredDate: text(rec["deliveredDate"]) || "0001-01-01T00:00:00",
      finished: status === 5,
      report: text(rec["report"]),
      visualized: rec["visualized"] ?? false,
      visualizedDate: text(rec["visualizedDate"]),
      checkIn: rec["checkIn"] ?? checkedIn,
      checkInDate: text(rec["checkInDate"]),
      checkOut: rec["checkOut"] ?? (status === 4 || status === 5),
      checkOutDate: text(rec["checkOutDate"]),
      inputedKm: rec["inputedKm"] ?? 0,
      adoptedKm: rec["adoptedKm"] ?? 0,
      signatureUrl: text(rec["signatureUrl"]),
      signatureName: text(rec["signatureName"]),
      signatureDocument: text(rec["signatureDocument"]),
      checkInDistance: rec["checkInDistance"] ?? 0,
      checkOutDistance: rec["checkOutDistance"] ?? 0,
      survey: text(rec["survey"]),
      taskUrl: `${ctx.origin}/tarefa/${id}`,
      pendency: text(rec["pendency"]),
      ticketId: rec["ticketId"] ?? 0,
      ticketTitle: text(rec["ticketTitle"]),
      duration: text(rec["duration"]),
      durationDecimal: text(rec["durationDecimal"]),
      displacementStart: text(rec["displacementStart"]),
      estimatedDuration: text(rec["estimatedDuration"]) || "00:00:00",
      financialCategory: text(rec["financialCategory"]),
      summary: taskSummary(rec),
      questionnaires: questionnaireGroups(wire["questionnaires"], ctx),
      ...dates(rec)
    }
  },
  users: (wire, rec, ctx) => {
    const users = resource("users")
    const out: Rec = { ...wire }
    if (ctx.settings.userIdStyle === "userId") {
      delete out[idReadName(users)!]
      out["userId"] = rec[idName(users)]
    }
    const type = rec["userType"]
    out["userType"] = type === undefined || type === null
      ? null
      : { userTypeId: type, description: String(enumLabel(users, "userType", type)) }
    out["basePoint"] = {
      address: text(rec["address"]),
      latitude: rec["latitude"] ?? 0,
      longitude: rec["longitude"] ?? 0
    }
    out["pictureUrl"] = text(rec["pictureUrl"])
    return out
  },
  customers: (wire, rec) => ({
    ...wire,
    managerJobPosition: text(rec["managerJobPosition"]),
    contacts: (Array.isArray(rec["contacts"]) ? rec["contacts"] : []).map((c: Rec, i: number) => ({
      id: c["id"] ?? i + 1,
      ...c
    })),
    uriAnexos: Array.isArray(rec["uriAnexos"]) ? rec["uriAnexos"] : [],
    // The Blueprint's customer carries its attachments' addresses as `uriAttachments` (api-notes, issue 23).
    uriAttachments: Array.isArray(rec["uriAttachments"]) ? rec["uriAttachments"] : [],
    ...dates(rec)
  }),
  // The Blueprint's equipment (api-notes, issue 23): an image address, attachment addresses, an expiration date, and
  // unset dates read as "0001-01-01T00:00:00".
  equipments: (wire, rec) => ({
    ...wire,
    urlImage: text(rec["urlImage"]),
    uriAnexos: Array.isArray(rec["uriAnexos"]) ? rec["uriAnexos"] : [],
    warrantyStartDate: text(rec["warrantyStartDate"]) || unsetDate,
    warrantyEndDate: text(rec["warrantyEndDate"]) || unsetDate,
    expirationDate: text(rec["expirationDate"]) || unsetDate
  }),
  products: (wire, rec, ctx) => {
    const code = rec[idName(resource("products"))]
    const stock = ctx.account
      .table("employee-product-stock")
      .values()
      .filter((s) => idKey(s["productId"]) === idKey(code))
      .map((s, i) => ({ id: i + 1, userId: s["userId"], amount: s["amount"] }))
    // The GUID the store assigned on insert (task items name products by it); a derived one for a record without.
    const guid = typeof rec["productId"] === "string" && rec["productId"] !== "" ? rec["productId"] : productGuid(code)
    return {
      ...wire,
      productId: guid,
      Base64Image: "",
      productSpecifications: [],
      employeesStock: stock,
      uriAnexos: []
    }
  },
  webhooks: (wire, rec) => {
    const webhooks = resource("webhooks")
    return {
      ...wire,
      entity: enumLabel(webhooks, "entity", rec["entity"]),
      action: enumLabel(webhooks, "action", rec["action"]),
      userId: 1,
      creationDate: text(rec["creationDate"]),
      deleteDate: ""
    }
  },
  expenses: (wire, rec, ctx) => ({
    ...wire,
    userToName: nameOf(ctx, "users", rec["userToId"], "name"),
    typeName: nameOf(ctx, "expense-types", rec["typeId"], "description"),
    attachmentUrl: text(rec["attachmentUrl"]),
    creationDate: text(rec["creationDate"])
  }),
  "expense-types": (wire, rec) => ({
    ...wire,
    creatorId: rec["creatorId"] ?? 1,
    creationDate: text(rec["creationDate"])
  }),
  segments: (wire, rec) => ({
    ...wire,
    creationDate: text(rec["creationDate"]),
    registrationDate: text(rec["creationDate"])
  }),
  keywords: (wire, rec) => ({
    ...wire,
    creationDate: text(rec["creationDate"]),
    registrationDate: text(rec["creationDate"])
  }),
  teams: (wire, rec) => ({ ...wire, creationDate: text(rec["creationDate"]) }),
  "task-types": (wire) => ({
    ...wire,
    // The GET model spells these `standard…`, the other answers `standart…` (api-reference §2.6): both are sent.
    standardTime: wire["standartTime"] ?? "",
    standardQuestionnaireId: wire["standartQuestionnaireId"] ?? 0
  }),
  tickets: (wire, rec, ctx) => ({
    ...wire,
    creationDate: text(rec["created"]),
    teamName: nameOf(ctx, "teams", rec["teamId"], "description"),
    userCreatorId: 1,
    userCreatorName: "",
    userResponsableName: nameOf(ctx, "users", rec["userResponsableId"], "name"),
    customerName: nameOf(ctx, "customers", rec["customerId"], "name"),
    customerEmail: "",
    customerPhoneNumber: "",
    requestTypeDescription: text(ctx.account.table("ticket-request-types").get(rec["requestTypeId"])?.["description"]),
    statusDescription: "",
    statusType: 0,
    endDate: "",
    taskIDs: [],
    urlAttachments: [],
    customFields: [],
    alterations: [],
    interactions: []
  }),
  "gps-positions": (wire) => {
    // Positions have no id in the API (the sandbox keeps one only to store them).
    const { id: _id, ...position } = wire
    return position
  }
}

/** `wire` (the read-back of the stored `rec`) with what the service derives for records of `r`. */
export const derive = (r: Resource, wire: Rec, rec: Rec, ctx: ReadContext): Rec =>
  derivations[r.name]?.(wire, rec, ctx) ?? wire

/** The read-back of a stored record with its derived properties. */
export const readBackWith = (r: Resource, rec: Rec, ctx: ReadContext): Rec => derive(r, readBack(r, rec), rec, ctx)

/** Only the properties named in `selectfields` (compared case-insensitively), in the order asked. */
export const selectFields = (rec: Rec, names: ReadonlyArray<string>): Rec => {
  const byLower = new Map(Object.keys(rec).map((k) => [k.toLowerCase(), k]))
  const out: Rec = {}
  for (const name of names) {
    const key = byLower.get(name.toLowerCase())
    if (key !== undefined) out[key] = rec[key]
  }
  return out
}
