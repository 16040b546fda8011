/**
 * The resource table: every resource of the Field-Service API v2 described once.
 *
 * Templates, validation, import, export, the onboarding order and the sandbox's routes are all read from here.
 * Field names are the API's write names (api-notes B); `readAs` names the property the live service sends back
 * when it differs. Adding a resource is adding an entry to `resources`.
 */

export type FieldType =
  | { readonly _tag: "string"; readonly maxLength?: number }
  | { readonly _tag: "integer"; readonly min?: number; readonly max?: number }
  | { readonly _tag: "number"; readonly min?: number; readonly max?: number }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "date" }
  | { readonly _tag: "time" }
  | { readonly _tag: "email" }
  | { readonly _tag: "cpfCnpj" }
  | { readonly _tag: "guid" }
  | {
    readonly _tag: "enum"
    readonly values: ReadonlyArray<{ readonly value: number; readonly label: string }>
    /**
     * The codes the tool used before they were aligned with the API (ticket priority, discount type). A number a
     * file gives is read with today's codes; one whose meaning changed is refused (write the label), one that
     * only the former codes had is read as its label, with a warning. Exports write such fields as labels.
     */
    readonly formerly?: ReadonlyArray<{ readonly value: number; readonly label: string }>
  }
  /** A nested object (or list of objects) whose shape is given by `shape`; cells hold JSON. */
  | { readonly _tag: "object"; readonly shape: ReadonlyArray<string> }
  /** A local file named in the template; sent base64-encoded as `{name, file}`. */
  | { readonly _tag: "file" }

/** How a money value comes back from the live service (api-notes: "Money often comes back as pt-BR strings"). */
type ReadFormat = "ptBrMoney" | "dotMoney"

export interface Reference {
  /** The resource whose server id this field holds. */
  readonly resource: ResourceName
  /** The template column that names the referenced record by its correlation key instead of its id. */
  readonly column: string
  /** Which property of the referenced record that column holds (defaults to the resource's `key`). */
  readonly by?: string
  /**
   * The referenced record's property the request body carries instead of its id, looked up when the row is sent
   * (task product items name the product by its GUID `productId`; files and paths use its numeric code).
   */
  readonly sendAs?: string
}

export interface Field {
  readonly name: string
  readonly type: FieldType
  /** The cell holds a list (`a|b|c`), sent as a JSON array. */
  readonly list?: boolean
  /** Required when a record is created. */
  readonly required?: boolean
  readonly ref?: Reference
  /** Property name in read-back bodies when it differs from `name`. */
  readonly readAs?: string
  readonly readFormat?: ReadFormat
  /** Sent on writes, never returned (passwords, upsert flags, files). */
  readonly writeOnly?: boolean
  /**
   * A value the server keeps but never shows (a password): sent when the record is created, and on an update only
   * when the run asks (`--send-write-only`); otherwise a re-import would reset what was changed since, unseen.
   */
  readonly createOnly?: boolean
  /**
   * The service reads this number back as `0` when it was never set (users' `hourValue`, services' `price`: the
   * Blueprint's defaults), so a `0` read back may mean "unset": compared as an empty cell, exported as one.
   */
  readonly zeroWhenUnset?: boolean
  /** Assigned by the server; never sent on writes. */
  readonly readOnly?: boolean
  /** The server refuses a second record of the account with the same value (409). */
  readonly unique?: boolean
  /**
   * The `errorCode` of the live service's refusal of a second record with a `unique` value, when it has one (webhooks'
   * `entity`: 1026, one subscription per entity; api-notes "Live behaviour reported by more public clients").
   */
  readonly uniqueCode?: number
  /**
   * The server turns the names this field holds into the ids of `field`, a reference field of the resource the
   * records are written to, by matching the referenced records' `by` property (`/customers/complete`).
   */
  readonly resolves?: { readonly field: string; readonly by: string }
  /** An upsert (`PUT` on the collection) also carries the value under this name (customers: `description`). */
  readonly upsertAs?: string
  /** The property a JSON Patch addresses when it differs from `name` (expenses: `expenseDate`). */
  readonly patchAs?: string
  /** Written as the enumeration's label, not its number (webhooks' `entity`, `action`). */
  readonly sendLabel?: boolean
  /** Ids written as JSON strings (tasks' `keyWords`: `string[]`). */
  readonly sendText?: boolean
  /**
   * Personal data (`export --redact pii`): which kind of fake replaces it. For a nested object, `members` gives
   * the kind of each member that holds some (contacts' name, email, phone).
   */
  readonly personal?: PersonalKind | { readonly members: Readonly<Record<string, PersonalKind>> }
  readonly doc: string
  readonly example?: string
}

/** What a personal value is, so its fake keeps its form (a valid CPF/CNPJ, an e-mail, a phone's shape). */
export type PersonalKind = "name" | "email" | "phone" | "cpfCnpj" | "address"

export type Operation =
  | "list" // GET /collection (paginated)
  | "create" // POST /collection
  | "upsert" // PUT /collection
  | "get" // GET /collection/{id}
  | "patch" // PATCH /collection/{id}
  | "delete" // DELETE /collection/{id}
  | "update" // PUT /collection/{id}

type ResourceKind =
  /** A top-level collection of records. */
  | "record"
  /** Items under a parent record, written with PUT/DELETE on `/parent/{id}/<sub>`. */
  | "subcollection"
  /** A write that is not a record of its own (questionnaire answers, employee stock, attachments). */
  | "action"
  /** A list only exported, never imported. */
  | "readonly"

export interface Resource {
  /** The contract's name: template file names, workbook sheet names, CLI arguments. */
  readonly name: ResourceName
  readonly title: string
  readonly kind: ResourceKind
  /** Path of the collection relative to the base URL, or of the write for sub-collections/actions (`{id}` = parent). */
  readonly path: string
  readonly ops: ReadonlyArray<Operation>
  /** The server identifier: its name on writes and in paths, its name in read-back bodies, and its type. */
  readonly id?: { readonly name: string; readonly readAs?: string; readonly type: "integer" | "guid" }
  /** Correlation field: the upsert key, and what the tool looks records up by before any resend. */
  readonly key?: string
  /** For sub-collections and actions: the parent resource and the column that holds its id. */
  readonly parent?: { readonly resource: ResourceName; readonly field: string }
  /**
   * Sub-collections and actions the service sends back inside their parent's records: the parent's property that
   * holds the items (a task's `products`). Export reads them from there; they have no list endpoint of their own.
   */
  readonly readBackIn?: string
  /**
   * When the items come back grouped (questionnaire answers: `questionnaires[].answers[]`, api-notes B): the list
   * inside each group that holds them; the group's other properties (`itemID`, `codigoChecklist`) belong to each.
   */
  readonly readBackItems?: string
  /** The list call needs `startDate`/`endDate` in `paramFilter` and is walked in date windows on export. */
  readonly dateWindow?: { readonly field: string }
  /**
   * The most records one page of the list may hold: a larger `pageSize` is answered 400 (tasks: 100, "You cannot
   * request more than 100 tasks per page", api-notes "Live behaviour reported by more public clients").
   */
  readonly maxPageSize?: number
  /** Filter keys accepted in `paramFilter` (api-notes), mapped to the record property they test. */
  readonly filters?: Readonly<Record<string, string>>
  /** Filter keys whose value is a comma-separated list of alternatives (tasks' `externalId`). */
  readonly listFilters?: ReadonlyArray<string>
  /** The records this resource writes are listed (and looked up by key) through another resource's list. */
  readonly readVia?: ResourceName
  /** The HTTP status of a successful create when it is not 201 (tickets answer 200). */
  readonly createdStatus?: number
  /**
   * Sub-collection items on the wire: the body wraps them in `{<wrapper>: [items]}`, item properties take the
   * names in `names` (`productId` → `ProductId`) and every value is sent as a JSON string (numbers as decimal text).
   */
  readonly items?: { readonly wrapper: string; readonly names: Readonly<Record<string, string>> }
  /**
   * Attachment uploads on the wire: `list` = `{<flag>: bool, attachments: [{name, file}]}` (tasks, customers,
   * equipments, products); `single` = `{<flag>: bool, attachment: "<base64>"}` (expenses: one file, no name).
   * `flag` is the writable boolean field that removes earlier attachments first.
   */
  readonly upload?: { readonly _tag: "list" | "single"; readonly flag: string }
  /** Columns earlier versions of the templates had that are no longer sent: column → why (a file may still have them). */
  readonly retiredColumns?: Readonly<Record<string, string>>
  readonly fields: ReadonlyArray<Field>
  readonly doc: string
}

// --- field constructors -------------------------------------------------------------------------------------

type Extra = Omit<Field, "name" | "type" | "doc">
const f = (name: string, type: FieldType, doc: string, extra: Extra = {}): Field => ({ name, type, doc, ...extra })
const str = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "string" }, doc, extra)
const int = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "integer" }, doc, extra)
const num = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "number" }, doc, extra)
const bool = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "boolean" }, doc, extra)
const date = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "date" }, doc, extra)
const enm = (name: string, doc: string, values: Array<[number, string]>, extra?: Extra) =>
  f(name, { _tag: "enum", values: values.map(([value, label]) => ({ value, label })) }, doc, extra)
const ref = (
  name: string,
  resource: ResourceName,
  column: string,
  doc: string,
  extra?: Extra & { by?: string; sendAs?: string }
) => {
  const { by, sendAs, ...rest } = extra ?? {}
  return f(name, { _tag: "integer" }, doc, {
    ...rest,
    ref: { resource, column, ...(by !== undefined ? { by } : {}), ...(sendAs !== undefined ? { sendAs } : {}) }
  })
}
const file = (name: string, doc: string, extra?: Extra) => f(name, { _tag: "file" }, doc, { writeOnly: true, ...extra })

const idField = (doc = "Server id; leave empty to create") => int("id", doc)
const externalId = (example: string) =>
  str("externalId", "Your own unique key for the record; used to find it again (upsert key)", { example, unique: true })
const description = (example: string) =>
  str("description", "Description (name) of the record", { required: true, example })
const latitude = (name = "latitude") =>
  f(name, { _tag: "number", min: -90, max: 90 }, "Latitude in decimal degrees", { example: "-23.5614" })
const longitude = (name = "longitude") =>
  f(name, { _tag: "number", min: -180, max: 180 }, "Longitude in decimal degrees", { example: "-46.6559" })

/** Fields of an attachment upload: the parent record, the local file and the name it gets on the server. */
const attachmentFields = (parent: ResourceName, parentColumn: string, example: string): ReadonlyArray<Field> => [
  ref("id", parent, parentColumn, `Server id of the ${parent.replace(/s$/, "")} that receives the file`, {
    required: true
  }),
  file("file", "Path of a local file, relative to the template or workbook", { required: true, example }),
  str("name", "File name shown on the server, with its extension (defaults to the local file name)", {
    example: example.split("/").pop()!
  }),
  bool("removeAllAttachmentsInsertedByMe", "First remove the files this account attached to the record earlier", {
    writeOnly: true,
    example: "false"
  })
]

/** The API's upload body for tasks, customers, equipments and products. */
const listUpload = { _tag: "list", flag: "removeAllAttachmentsInsertedByMe" } as const

/** Discount type of task items (API: 0 amount, 1 percentage; the tool had 1 percent, 2 amount). */
const discountType = () =>
  f(
    "discountType",
    {
      _tag: "enum",
      values: [{ value: 0, label: "amount" }, { value: 1, label: "percent" }],
      formerly: [{ value: 1, label: "percent" }, { value: 2, label: "amount" }]
    },
    "Discount type: amount or percent (API codes 0 amount, 1 percent)",
    { example: "" }
  )

const dateWindowFilters = { startDate: "", endDate: "" }

// --- the table -----------------------------------------------------------------------------------------------

export const resourceNames = [
  "users",
  "customers",
  "customers-complete",
  "customer-groups",
  "products",
  "product-categories",
  "services",
  "equipments",
  "equipment-categories",
  "keywords",
  "expense-types",
  "segments",
  "teams",
  "task-types",
  "tasks",
  "task-products",
  "task-services",
  "task-additional-costs",
  "questionnaire-answers",
  "expenses",
  "tickets",
  "receivables",
  "service-orders",
  "additional-costs",
  "webhooks",
  "employee-product-stock",
  "customer-attachments",
  "product-attachments",
  "equipment-attachments",
  "task-attachments",
  "expense-attachments",
  "deleted-tasks",
  "ticket-request-types",
  "customer-group-clients",
  "team-users",
  "questionnaires",
  "gps-positions",
  "satisfaction-surveys",
  "quotations"
] as const
export type ResourceName = (typeof resourceNames)[number]

const table: ReadonlyArray<Resource> = [
  {
    name: "segments",
    title: "Segments",
    kind: "record",
    path: "/segments",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Market segments that customers belong to",
    fields: [idField(), description("Supermercados")]
  },
  {
    name: "keywords",
    title: "Keywords",
    kind: "record",
    path: "/keywords",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Keywords (tags) attached to tasks",
    fields: [idField(), description("Urgente")]
  },
  {
    name: "expense-types",
    title: "Expense types",
    kind: "record",
    path: "/expensetypes",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Kinds of expense a technician can report",
    fields: [idField(), description("Combustível")]
  },
  {
    name: "product-categories",
    title: "Product categories",
    kind: "record",
    path: "/productcategories",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "externalId",
    filters: { externalId: "externalId", description: "description" },
    doc: "Categories of products",
    fields: [idField(), externalId("CAT-FILTROS"), description("Filtros")]
  },
  {
    name: "equipment-categories",
    title: "Equipment categories",
    kind: "record",
    path: "/equipmentcategories",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "externalId",
    filters: { externalId: "externalId", description: "description" },
    doc: "Categories of equipment (no upsert in the API: the tool looks records up by externalId)",
    fields: [idField(), externalId("EQC-SPLIT"), description("Ar-condicionado split")]
  },
  {
    name: "users",
    title: "Users",
    kind: "record",
    path: "/users",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", readAs: "userID", type: "integer" },
    key: "externalId",
    filters: {
      name: "name",
      externalId: "externalId",
      login: "login",
      smartPhoneNumber: "smartPhoneNumber",
      userType: "userType"
    },
    listFilters: ["externalId"],
    doc: "Technicians, team managers and administrators",
    fields: [
      idField(),
      externalId("USR-001"),
      str("name", "Full name", { personal: "name", example: "Ana Souza" }),
      str("login", "Login (unique in the account)", { required: true, unique: true, example: "ana.souza" }),
      str("password", "Password, required when the user is created", {
        writeOnly: true,
        createOnly: true,
        example: "Troque@2026"
      }),
      f("email", { _tag: "email" }, "E-mail address", { personal: "email", example: "ana.souza@example.com.br" }),
      str("smartPhoneNumber", "Mobile phone", { personal: "phone", example: "+55 11 91234-5678" }),
      str("jobPosition", "Job title", { example: "Técnica de campo" }),
      str("culture", "Language and formats", { example: "pt-BR" }),
      enm("userType", "Kind of user", [[1, "user"], [2, "team manager"], [3, "administrator"]], { example: "1" }),
      f("workDaysOfWeek", { _tag: "integer", min: 1, max: 7 }, "Working days, 1 = Sunday … 7 = Saturday", {
        list: true,
        example: "2|3|4|5|6"
      }),
      f("startWorkHour", { _tag: "time" }, "Start of the working day (HH:mm:ss)", { example: "08:00:00" }),
      f("endWorkHour", { _tag: "time" }, "End of the working day (HH:mm:ss)", { example: "18:00:00" }),
      num("hourValue", "Cost of one hour of work", { example: "85.50", zeroWhenUnset: true }),
      str("address", "Base address (where the working day starts)", {
        personal: "address",
        example: "Rua Augusta, 1500, São Paulo - SP"
      }),
      latitude(),
      longitude(),
      bool("unavailableForTasks", "Not available to receive tasks", { example: "false" }),
      bool("checkInManual", "Check-in is done by hand", { example: "false" }),
      enm("gpsFrequency", "GPS reporting interval in seconds: 60, 120, 180, 240 or 300", [
        [60, "1 minute"],
        [120, "2 minutes"],
        [180, "3 minutes"],
        [240, "4 minutes"],
        [300, "5 minutes"]
      ], { example: "120" })
    ]
  },
  {
    name: "teams",
    title: "Teams",
    kind: "record",
    path: "/teams",
    ops: ["list", "create", "get"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Teams of users (the API can only create them: an existing team is found by description)",
    fields: [
      idField(),
      description("Equipe Zona Sul"),
      ref("participants", "users", "participantsLogin", "Members of the team (user ids)", {
        list: true,
        by: "login",
        example: ""
      }),
      ref("managers", "users", "managersLogin", "Managers of the team (user ids)", {
        list: true,
        by: "login",
        example: ""
      })
    ]
  },
  {
    name: "customer-groups",
    title: "Customer groups",
    kind: "record",
    path: "/customergroups",
    ops: ["list", "create", "delete"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Groups of customers (the API can only create and delete them: an existing group is found by description)",
    fields: [
      idField(),
      description("Redes de varejo"),
      // Not a reference: groups are created before customers, which join them through `groupsId`.
      int("clientsId", "Customers in the group (customer ids)", { list: true })
    ]
  },
  {
    name: "customers",
    title: "Customers",
    kind: "record",
    path: "/customers",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "externalId",
    filters: {
      description: "name",
      externalId: "externalId",
      active: "active",
      segmentId: "segmentId",
      groupId: "groupsId",
      cpfCnpj: "cpfCnpj"
    },
    listFilters: ["externalId"],
    doc: "Customers and their addresses (task destinations)",
    fields: [
      idField(),
      externalId("CLI-0001"),
      str("name", "Trade name", {
        personal: "name",
        required: true,
        readAs: "description",
        upsertAs: "description",
        example: "Padaria Pão Quente"
      }),
      str("legalName", "Legal (company) name", { personal: "name", example: "Pão Quente Panificadora Ltda" }),
      f("cpfCnpj", { _tag: "cpfCnpj" }, "CPF (11 digits) or CNPJ (14 digits); punctuation accepted, digits sent", {
        personal: "cpfCnpj",
        example: "11.222.333/0001-81"
      }),
      str("phoneNumber", "Phone numbers", { personal: "phone", list: true, example: "+55 11 3333-4444" }),
      f("email", { _tag: "email" }, "E-mail addresses", {
        personal: "email",
        list: true,
        example: "contato@paoquente.com.br"
      }),
      str("manager", "Name of the person in charge", { personal: "name", example: "Carlos Lima" }),
      str("note", "Notes", { example: "" }),
      str("address", "Address (used as the destination of tasks)", {
        personal: "address",
        example: "Av. Paulista, 1000, Bela Vista, São Paulo - SP, 01310-100"
      }),
      str("adressComplement", "Address complement (the API's own spelling)", {
        personal: "address",
        example: "Loja 2"
      }),
      latitude(),
      longitude(),
      int("maximumVisitTime", "Longest visit, in the unit below", { example: "60" }),
      enm("unitMaximumTime", "Unit of maximumVisitTime", [[1, "minutes"], [2, "hours"]], { example: "1" }),
      ref("groupsId", "customer-groups", "groupsDescription", "Customer groups (ids)", {
        list: true,
        by: "description"
      }),
      ref("managerTeamsId", "teams", "managerTeamsDescription", "Teams that serve the customer (ids)", {
        list: true,
        by: "description"
      }),
      ref("managersId", "users", "managersLogin", "Users in charge (ids)", { list: true, by: "login" }),
      ref("segmentId", "segments", "segmentDescription", "Segment (id)", { by: "description" }),
      bool("active", "Active customer", { example: "true" }),
      f(
        "contacts",
        { _tag: "object", shape: ["name", "jobPosition", "email", "phone"] },
        "Contacts, as a JSON list of {name, jobPosition, email, phone}",
        {
          personal: { members: { name: "name", email: "email", phone: "phone" } },
          list: true,
          example:
            "[{\"name\":\"Carlos Lima\",\"jobPosition\":\"Gerente\",\"email\":\"carlos@paoquente.com.br\",\"phone\":\"+55 11 99999-0000\"}]"
        }
      ),
      bool("identifierBycpfCnpj", "Also find the customer by cpfCnpj when upserting", {
        writeOnly: true,
        example: "false"
      })
    ]
  },
  {
    name: "customers-complete",
    title: "Customers (complete form)",
    kind: "action",
    path: "/customers/complete",
    ops: ["create", "upsert"],
    id: { name: "id", type: "integer" },
    key: "externalId",
    readVia: "customers",
    doc: "Customers with billing data, observations and associations given by name instead of id",
    fields: [
      idField(),
      externalId("CLI-0001"),
      str("name", "Trade name", { personal: "name", required: true, example: "Padaria Pão Quente" }),
      str("legalName", "Legal (company) name", { personal: "name", example: "Pão Quente Panificadora Ltda" }),
      f("cpfCnpj", { _tag: "cpfCnpj" }, "CPF or CNPJ; punctuation accepted, digits sent", {
        personal: "cpfCnpj",
        example: "11.222.333/0001-81"
      }),
      str("phoneNumber", "Phone numbers", { personal: "phone", list: true, example: "+55 11 3333-4444" }),
      f("email", { _tag: "email" }, "E-mail addresses", {
        personal: "email",
        list: true,
        example: "contato@paoquente.com.br"
      }),
      str("address", "Address", { personal: "address", example: "Av. Paulista, 1000, São Paulo - SP" }),
      latitude(),
      longitude(),
      str("groups", "Customer groups, by description", {
        list: true,
        resolves: { field: "groupsId", by: "description" },
        example: "Redes de varejo"
      }),
      str("teamsName", "Teams that serve the customer, by description", {
        list: true,
        resolves: { field: "managerTeamsId", by: "description" },
        example: "Equipe Zona Sul"
      }),
      str("segmentName", "Segment, by description", {
        resolves: { field: "segmentId", by: "description" },
        example: "Supermercados"
      }),
      str("managersName", "Users in charge, by name", {
        list: true,
        resolves: { field: "managersId", by: "name" },
        example: ""
      }),
      str("observation", "Observation shown to technicians", { example: "" }),
      str("internalObservation", "Internal observation", { example: "" }),
      f("billingEmail", { _tag: "email" }, "Billing e-mail", {
        personal: "email",
        example: "financeiro@paoquente.com.br"
      }),
      str("billingZipCode", "Billing ZIP code (CEP)", { example: "01310-100" }),
      str("billingAddress", "Billing street", { example: "Av. Paulista" }),
      str("billingAddressNumber", "Billing number", { example: "1000" }),
      str("billingCity", "Billing city", { example: "São Paulo" }),
      str("billingState", "Billing state (UF)", { example: "SP" }),
      bool("active", "Active customer", { example: "true" }),
      bool("identifierBycpfCnpj", "Also find the customer by cpfCnpj when upserting", {
        writeOnly: true,
        example: "false"
      })
    ]
  },
  {
    name: "products",
    title: "Products",
    kind: "record",
    path: "/products",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", readAs: "code", type: "integer" },
    key: "externalId",
    filters: { name: "name", externalId: "externalId", categoryId: "categoryId", active: "active" },
    doc: "Products and parts",
    fields: [
      idField(),
      externalId("PRD-FILTRO-01"),
      str("name", "Product name", { required: true, example: "Filtro de ar 12.000 BTU" }),
      str("description", "Description", { example: "Filtro lavável" }),
      ref("categoryId", "product-categories", "categoryExternalId", "Product category (id)"),
      num("unitaryValue", "Sale price", { readFormat: "ptBrMoney", example: "49.90" }),
      num("unitaryCost", "Cost", { readFormat: "ptBrMoney", example: "22.00" }),
      num("minimumStock", "Minimum stock", { example: "5" }),
      num("totalStock", "Stock on hand", { example: "40" }),
      bool("active", "Active product", { example: "true" }),
      ref(
        "associatedEquipmentId",
        "equipments",
        "associatedEquipmentExternalId",
        "Equipment the product belongs to (id)"
      ),
      f(
        "productId",
        { _tag: "guid" },
        "The product's GUID, assigned by the server (task product items name the product by it)",
        { readOnly: true }
      )
    ]
  },
  {
    name: "services",
    title: "Services (catalog)",
    kind: "record",
    path: "/services",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", type: "guid" },
    key: "externalCode",
    filters: { externalCode: "externalCode", title: "title" },
    doc: "Services offered (catalog items)",
    fields: [
      f("id", { _tag: "guid" }, "Server id (GUID); leave empty to create"),
      str("externalCode", "Your own unique code for the service (upsert key)", {
        unique: true,
        example: "SRV-LIMPEZA"
      }),
      str("title", "Title", { required: true, example: "Limpeza de split" }),
      str("description", "Description", { example: "Limpeza completa com higienização" }),
      // The Blueprint's create body: "price (number; default 0.0)": an unset price reads "0.00".
      num("price", "Price", { readFormat: "dotMoney", example: "180.00", zeroWhenUnset: true }),
      bool("active", "Active service", { example: "true" }),
      f("fiscalServiceId", { _tag: "guid" }, "Fiscal service (GUID) the service is invoiced as", { example: "" })
    ]
  },
  {
    name: "equipments",
    title: "Equipments",
    kind: "record",
    path: "/equipments",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "externalId",
    filters: {
      name: "name",
      externalId: "externalId",
      associatedCustomerId: "associatedCustomerId",
      categoryId: "categoryId",
      identifier: "identifier"
    },
    doc: "Equipment installed at customers",
    fields: [
      idField(),
      externalId("EQP-0001"),
      str("name", "Equipment name", { required: true, example: "Split Sala de Reuniões" }),
      str("description", "Description", { example: "Split 12.000 BTU inverter" }),
      str("identifier", "Serial number", { example: "SN-778812" }),
      ref("associatedCustomerId", "customers", "associatedCustomerExternalId", "Customer where it is installed (id)"),
      ref("associatedUserId", "users", "associatedUserLogin", "User responsible (id)", { by: "login" }),
      ref("parentEquipmentId", "equipments", "parentEquipmentExternalId", "Parent equipment (id)"),
      ref("categoryId", "equipment-categories", "categoryExternalId", "Equipment category (id)"),
      bool("active", "Active equipment", { example: "true" }),
      f(
        "equipmentSpecifications",
        { _tag: "object", shape: ["name", "specification"] },
        "Specifications, as a JSON list of {name, specification}",
        { list: true, example: "[{\"name\":\"Capacidade\",\"specification\":\"12000 BTU\"}]" }
      ),
      date("warrantyStartDate", "Start of warranty", { example: "2025-01-15" }),
      date("warrantyEndDate", "End of warranty", { example: "2027-01-15" })
    ]
  },
  {
    name: "task-types",
    title: "Task types",
    kind: "record",
    path: "/tasktypes",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    key: "description",
    filters: { description: "description" },
    doc: "Kinds of task (no upsert in the API: an existing one is found by description)",
    fields: [
      idField(),
      description("Manutenção preventiva"),
      f("standartTime", { _tag: "time" }, "Expected duration, HH:mm:ss (the API's own spelling)", {
        example: "01:30:00"
      }),
      f("toleranceTime", { _tag: "time" }, "Tolerance on the expected duration", { readOnly: true }),
      int(
        "standartQuestionnaireId",
        "Questionnaire (checklist) the task type attaches by default (the API's own spelling)",
        { example: "" }
      ),
      bool("sendSatisfactionSurvey", "Send a satisfaction survey when a task of this type is finished", {
        example: "false"
      }),
      bool("active", "Active task type", { example: "true" }),
      f(
        "requirements",
        {
          _tag: "object",
          shape: [
            "fillReport",
            "getSignature",
            "fillRolledKilometer",
            "emailTheTask",
            "minimumNumberOfPhotos",
            "requiredQuestionnaires"
          ]
        },
        "What finishing a task of this type requires, as JSON {fillReport, getSignature, fillRolledKilometer, emailTheTask, minimumNumberOfPhotos, requiredQuestionnaires}",
        { example: "{\"fillReport\":true,\"getSignature\":false}" }
      ),
      int("creatorId", "User who created the task type", { readOnly: true }),
      date("creationDate", "When the task type was created", { readOnly: true })
    ]
  },
  {
    name: "tasks",
    title: "Tasks",
    kind: "record",
    path: "/tasks",
    ops: ["list", "create", "upsert", "get", "patch", "delete"],
    id: { name: "id", readAs: "taskID", type: "integer" },
    key: "externalId",
    dateWindow: { field: "taskDate" },
    maxPageSize: 100,
    filters: {
      ...dateWindowFilters,
      externalId: "externalId",
      customerId: "customerId",
      idUserTo: "idUserTo",
      status: "taskStatus",
      type: "taskType",
      teamId: "teamId",
      priority: "priority"
    },
    listFilters: ["externalId"],
    doc: "Tasks (service orders, visits, field work)",
    fields: [
      idField(),
      externalId("OS-2026-0001"),
      ref("idUserFrom", "users", "userFromLogin", "User who opens the task (id)", { required: true, by: "login" }),
      ref("idUserTo", "users", "userToLogin", "Technician who does the task (id)", { by: "login" }),
      ref("teamId", "teams", "teamDescription", "Team (id)", { by: "description" }),
      ref("customerId", "customers", "customerExternalId", "Customer (id)"),
      int("taskType", "Task type (id; the API cannot list task types: see the sandbox's startup output)", {
        example: "1"
      }),
      date("taskDate", "Date and time of the task", { required: true, example: "2026-12-01T09:00:00" }),
      enm("priority", "Priority", [[1, "low"], [2, "medium"], [3, "high"]], { example: "2" }),
      f("orientation", { _tag: "string", maxLength: 5000 }, "Instructions for the technician (≤ 5000 characters)", {
        example: "Levar escada"
      }),
      str("address", "Address of the visit", { personal: "address", example: "Av. Paulista, 1000, São Paulo - SP" }),
      latitude(),
      longitude(),
      ref("equipmentsId", "equipments", "equipmentsExternalId", "Equipments to service (ids)", { list: true }),
      int("questionnaireId", "Questionnaire (checklist) attached to the task", { example: "" }),
      ref("keyWords", "keywords", "keyWordsDescription", "Keywords (ids)", {
        list: true,
        by: "description",
        sendText: true
      }),
      bool("sendSatisfactionSurvey", "Send a satisfaction survey when finished", { example: "false" }),
      enm("checkinType", "Check-in type", [[1, "manual"], [2, "automatic"], [3, "user"]], { example: "1" }),
      enm("taskStatus", "Status", [[1, "opened"], [2, "displaced"], [3, "checked in"], [4, "checked out"], [
        5,
        "finished"
      ], [6, "paused"]], { readOnly: true }),
      str("expense", "Expenses recorded on the task", { readOnly: true, readFormat: "ptBrMoney" })
    ]
  },
  {
    name: "task-products",
    title: "Task products",
    kind: "subcollection",
    path: "/tasks/{id}/products",
    ops: ["upsert", "delete"],
    parent: { resource: "tasks", field: "taskId" },
    readBackIn: "products",
    key: "productId",
    items: {
      wrapper: "taskProducts",
      names: {
        productId: "ProductId",
        quantity: "Quantity",
        value: "Value",
        discountType: "DiscountType",
        discountValue: "DiscountValue"
      }
    },
    doc:
      "Products used on a task (upserted by product; the API names the product by its GUID, the tool finds it from the code)",
    fields: [
      ref("taskId", "tasks", "taskExternalId", "Task (id)", { required: true }),
      ref("productId", "products", "productExternalId", "Product (code)", {
        required: true,
        readAs: "code",
        sendAs: "productId"
      }),
      num("quantity", "Quantity", { required: true, example: "2" }),
      num("value", "Unit value", { required: true, example: "49.90" }),
      discountType(),
      num("discountValue", "Discount", { example: "" })
    ]
  },
  {
    name: "task-services",
    title: "Task services",
    kind: "subcollection",
    path: "/tasks/{id}/services",
    ops: ["upsert", "delete"],
    parent: { resource: "tasks", field: "taskId" },
    readBackIn: "services",
    key: "serviceId",
    items: {
      wrapper: "taskServices",
      names: {
        serviceId: "ServiceId",
        quantity: "Quantity",
        value: "Value",
        discountType: "DiscountType",
        discountValue: "DiscountValue"
      }
    },
    doc: "Services done on a task (upserted by service)",
    fields: [
      ref("taskId", "tasks", "taskExternalId", "Task (id)", { required: true }),
      f("serviceId", { _tag: "guid" }, "Service (id)", {
        required: true,
        ref: { resource: "services", column: "serviceExternalCode" }
      }),
      num("quantity", "Quantity", { required: true, example: "1" }),
      num("value", "Unit value", { required: true, example: "180.00" }),
      discountType(),
      num("discountValue", "Discount", { example: "" })
    ]
  },
  {
    name: "additional-costs",
    title: "Additional costs",
    kind: "record",
    path: "/additionalcosts",
    ops: ["list", "create", "update"],
    id: { name: "id", type: "integer" },
    key: "name",
    filters: { name: "name" },
    doc: "Kinds of additional cost (the API has no upsert: an existing one is found by name)",
    fields: [
      idField(),
      str("name", "Name", { required: true, example: "Deslocamento" }),
      num("value", "Default value", { example: "35.00" })
    ]
  },
  {
    name: "task-additional-costs",
    title: "Task additional costs",
    kind: "subcollection",
    path: "/tasks/{id}/additional-costs",
    ops: ["upsert", "delete"],
    parent: { resource: "tasks", field: "taskId" },
    readBackIn: "additionalCosts",
    key: "additionalCostId",
    items: { wrapper: "taskAdditionalCosts", names: { additionalCostId: "AdditionalCostId", value: "Value" } },
    doc: "Additional costs charged on a task",
    fields: [
      ref("taskId", "tasks", "taskExternalId", "Task (id)", { required: true }),
      ref("additionalCostId", "additional-costs", "additionalCostName", "Additional cost (id)", {
        required: true,
        by: "name"
      }),
      num("value", "Value", { required: true, example: "35.00" })
    ]
  },
  {
    name: "questionnaire-answers",
    title: "Questionnaire answers",
    kind: "action",
    path: "/tasks/{id}/questionnaire-response",
    ops: ["upsert"],
    parent: { resource: "tasks", field: "taskId" },
    readBackIn: "questionnaires",
    readBackItems: "answers",
    doc: "Answers to a task's questionnaire: one PUT each, processed asynchronously (202)",
    fields: [
      ref("taskId", "tasks", "taskExternalId", "Task (id)", { required: true }),
      str("itemID", "Instance of the checklist on the task (keeps repeated checklists apart)", {
        required: true,
        example: "1"
      }),
      str("codigoChecklist", "Checklist code", { required: true, example: "CHK-PREV" }),
      str("codigoPergunta", "Question code", { required: true, readAs: "questionId", example: "P1" }),
      str("resposta", "The answer", { required: true, readAs: "reply", example: "Sim" }),
      ref(
        "codigoEquipamento",
        "equipments",
        "equipmentExternalId",
        "Equipment of the task the answer belongs to (id)",
        { readAs: "equipmentId" }
      )
    ]
  },
  {
    name: "expenses",
    title: "Expenses",
    kind: "record",
    path: "/expenses",
    ops: ["list", "create", "get", "patch", "delete"],
    id: { name: "id", type: "integer" },
    dateWindow: { field: "date" },
    filters: { ...dateWindowFilters, userToId: "userToId", typeId: "typeId", type: "typeId" },
    doc: "Expenses reported by users (no correlation key: creates are reconciled by user, type, date and amount)",
    fields: [
      idField(),
      str("description", "Description", { example: "Almoço em visita" }),
      ref("userToId", "users", "userToLogin", "User who spent (id)", { required: true, by: "login" }),
      ref("typeId", "expense-types", "typeDescription", "Expense type (id)", { required: true, by: "description" }),
      date("date", "Date of the expense", { required: true, patchAs: "expenseDate", example: "2026-11-20" }),
      num("amount", "Amount", { required: true, example: "42.50" })
    ]
  },
  {
    name: "tickets",
    title: "Tickets",
    kind: "record",
    path: "/tickets",
    ops: ["list", "create", "get", "patch"],
    id: { name: "id", type: "integer" },
    dateWindow: { field: "created" },
    filters: { ...dateWindowFilters, customerId: "customerId", statusId: "statusId" },
    createdStatus: 200,
    doc: "Support tickets",
    fields: [
      idField(),
      str("title", "Title", { required: true, example: "Ar-condicionado pingando" }),
      str("description", "Description", { example: "Cliente relata gotejamento" }),
      f(
        "priority",
        {
          _tag: "enum",
          values: [{ value: 1, label: "high" }, { value: 2, label: "medium" }, { value: 3, label: "low" }],
          formerly: [{ value: 1, label: "low" }, { value: 2, label: "medium" }, { value: 3, label: "high" }]
        },
        "Priority: high, medium or low (API codes 1 high, 2 medium, 3 low: the reverse of tasks')",
        { example: "medium" }
      ),
      f("requesterEmail", { _tag: "email" }, "Requester's e-mail", {
        personal: "email",
        example: "carlos@paoquente.com.br"
      }),
      str("requesterName", "Requester's name", { personal: "name", example: "Carlos Lima" }),
      int("requestTypeId", "Request type (id; see ticket-request-types)", { example: "1" }),
      ref("customerId", "customers", "customerExternalId", "Customer (id)"),
      ref("teamId", "teams", "teamDescription", "Team (id)", { by: "description" }),
      int("statusId", "Status (id)", { example: "1" }),
      ref("userResponsableId", "users", "userResponsableLogin", "User in charge (id; the API's own spelling)", {
        by: "login"
      }),
      ref("equipmentId", "equipments", "equipmentExternalId", "Equipment (id)"),
      f(
        "customFields",
        { _tag: "object", shape: ["customFieldTicket", "value"] },
        "Custom fields, as a JSON list of {customFieldTicket: {id}, value}",
        {
          list: true,
          example: ""
        }
      ),
      date("created", "When the ticket was opened", { readOnly: true })
    ]
  },
  {
    name: "receivables",
    title: "Receivables",
    kind: "record",
    path: "/receivables",
    ops: ["list", "create", "get", "update"],
    id: { name: "id", type: "integer" },
    filters: { customerId: "customerId", paid: "paid" },
    doc: "Amounts receivable from customers",
    fields: [
      idField(),
      ref("customerId", "customers", "customerExternalId", "Customer (id)", { required: true }),
      num("value", "Value", { required: true, example: "350.00" }),
      date("dueDate", "Due date", { required: true, example: "2026-12-10" }),
      date("competencyDate", "Competency date", { example: "2026-11-01" }),
      str("description", "Description", { example: "Contrato de manutenção - novembro" }),
      bool("paid", "Paid", { example: "false" }),
      date("paidDate", "Payment date", { example: "" }),
      num("paidValue", "Amount paid", { example: "" })
    ]
  },
  {
    name: "service-orders",
    title: "Service orders",
    kind: "record",
    path: "/serviceorders",
    ops: ["list", "create", "get", "patch"],
    id: { name: "code", type: "integer" },
    key: "externalId",
    filters: { externalId: "externalId", customerId: "customerId", statusId: "statusId" },
    doc: "Service orders, addressed by their code",
    fields: [
      int("code", "Server code; leave empty to create"),
      externalId("SO-2026-0001"),
      ref("customerId", "customers", "customerExternalId", "Customer (id)", { required: true }),
      int("statusId", "Status (id)", { example: "1" }),
      str("description", "Description", { example: "Manutenção preventiva trimestral" }),
      int("taskTypeId", "Task type (id)", { example: "1" }),
      enm("priority", "Priority", [[1, "low"], [2, "medium"], [3, "high"]], { example: "2" })
    ]
  },
  {
    name: "webhooks",
    title: "Webhooks",
    kind: "record",
    path: "/webhooks",
    ops: ["list", "create", "get", "delete"],
    id: { name: "id", type: "integer" },
    key: "targetUrl",
    doc: "Webhook subscriptions",
    fields: [
      idField(),
      enm("entity", "Entity watched", [[1, "User"], [4, "Task"], [7, "Customer"], [27, "Equipment"], [62, "Ticket"]], {
        required: true,
        sendLabel: true,
        unique: true,
        uniqueCode: 1026,
        example: "Task"
      }),
      enm("action", "Action watched", [[1, "Inclusao"], [2, "Alteracao"], [3, "Exclusao"]], {
        required: true,
        sendLabel: true,
        example: "Inclusao"
      }),
      str("targetUrl", "Address that receives the deliveries", {
        required: true,
        readAs: "urlResponse",
        example: "https://example.com.br/hooks/fsm"
      }),
      bool("active", "Active subscription", { example: "true" })
    ]
  },
  {
    name: "employee-product-stock",
    title: "Employee product stock",
    kind: "action",
    path: "/products/employee-product-stock",
    ops: ["upsert"],
    doc: "Stock of a product held by a user",
    fields: [
      ref("userId", "users", "userLogin", "User (id)", { required: true, by: "login" }),
      ref("productId", "products", "productExternalId", "Product (id)", { required: true }),
      num("amount", "Quantity held", { required: true, example: "3" })
    ]
  },
  {
    name: "customer-attachments",
    title: "Customer attachments",
    kind: "action",
    path: "/customers/{id}/attachments",
    ops: ["upsert"],
    parent: { resource: "customers", field: "id" },
    upload: listUpload,
    doc: "Files attached to customers",
    fields: attachmentFields("customers", "customerExternalId", "anexos/contrato.pdf")
  },
  {
    name: "product-attachments",
    title: "Product attachments",
    kind: "action",
    path: "/products/{id}/attachments",
    ops: ["upsert"],
    parent: { resource: "products", field: "id" },
    upload: listUpload,
    doc: "Files attached to products",
    fields: attachmentFields("products", "productExternalId", "anexos/ficha-tecnica.pdf")
  },
  {
    name: "equipment-attachments",
    title: "Equipment attachments",
    kind: "action",
    path: "/equipments/{id}/attachments",
    ops: ["upsert"],
    parent: { resource: "equipments", field: "id" },
    upload: listUpload,
    doc: "Files attached to equipments",
    fields: attachmentFields("equipments", "equipmentExternalId", "anexos/foto-etiqueta.jpg")
  },
  {
    name: "task-attachments",
    title: "Task attachments",
    kind: "action",
    path: "/tasks/{id}/attachments",
    ops: ["upsert"],
    parent: { resource: "tasks", field: "id" },
    upload: listUpload,
    doc: "Files attached to tasks",
    fields: attachmentFields("tasks", "taskExternalId", "anexos/foto-antes.jpg")
  },
  {
    name: "expense-attachments",
    title: "Expense attachments",
    kind: "action",
    path: "/expenses/{id}/attachments",
    ops: ["upsert"],
    parent: { resource: "expenses", field: "id" },
    upload: { _tag: "single", flag: "deleteAttachment" },
    retiredColumns: { name: "the API keeps one receipt per expense, without a file name" },
    doc: "Receipts attached to expenses (one per expense; expenses have no key: give the expense id)",
    fields: [
      int("id", "Server id of the expense", { required: true }),
      file("file", "Path of a local file, relative to the template or workbook", {
        required: true,
        example: "anexos/recibo.jpg"
      }),
      bool("deleteAttachment", "First delete the receipt the expense has", { writeOnly: true, example: "false" })
    ]
  },
  {
    name: "deleted-tasks",
    title: "Deleted tasks",
    kind: "readonly",
    path: "/tasks/GetDeletedTasks",
    ops: ["list"],
    id: { name: "id", readAs: "taskID", type: "integer" },
    dateWindow: { field: "deletedDate" },
    filters: { ...dateWindowFilters },
    doc: "Tasks that were deleted",
    fields: [
      idField("Server id"),
      str("externalId", "Your key of the task"),
      date("taskDate", "Date of the task"),
      date("deletedDate", "When it was deleted")
    ]
  },
  {
    name: "ticket-request-types",
    title: "Ticket request types",
    kind: "readonly",
    path: "/tickets/request-type",
    ops: ["list"],
    id: { name: "id", type: "integer" },
    doc: "Kinds of ticket request",
    fields: [idField("Server id"), description("Manutenção corretiva")]
  },
  {
    name: "customer-group-clients",
    title: "Customer group clients",
    kind: "readonly",
    path: "/customergroups/{id}/clients",
    ops: ["list"],
    parent: { resource: "customer-groups", field: "groupId" },
    doc: "Customers of each group",
    fields: [
      int("groupId", "Customer group (id)"),
      int("id", "Customer (id)"),
      str("externalId", "Customer's key"),
      str("name", "Customer's name", { personal: "name", readAs: "description" })
    ]
  },
  {
    name: "team-users",
    title: "Team users",
    kind: "readonly",
    path: "/teams/{id}/users",
    ops: ["list"],
    parent: { resource: "teams", field: "teamId" },
    doc: "Participants of each team",
    fields: [
      int("teamId", "Team (id)"),
      int("userId", "User (id)"),
      str("login", "User's login"),
      str("name", "User's name", { personal: "name" })
    ]
  },
  {
    name: "questionnaires",
    title: "Questionnaires",
    kind: "readonly",
    path: "/questionnaires",
    ops: ["list", "get"],
    id: { name: "id", type: "integer" },
    doc: "Questionnaires (checklists) that tasks attach; the API can only read them",
    fields: [
      idField("Server id"),
      str("description", "Name of the questionnaire"),
      str("header", "Header text"),
      str("footer", "Footer text"),
      date("creationDate", "When it was created"),
      f(
        "questions",
        { _tag: "object", shape: ["id", "answerType", "description", "subTitle", "requiredAnswer", "creationDate"] },
        "Questions, as JSON",
        { list: true }
      )
    ]
  },
  {
    name: "gps-positions",
    title: "GPS positions",
    kind: "readonly",
    path: "/gps",
    ops: ["list"],
    // Positions have no id in the API; the sandbox keeps one to store them and never sends it.
    id: { name: "id", type: "integer" },
    dateWindow: { field: "positionDate" },
    filters: { ...dateWindowFilters, userId: "userId" },
    doc: "Positions reported by the users' phones (read in date windows)",
    fields: [
      int("userId", "User (id)"),
      date("positionDate", "When the position was taken"),
      num("latitude", "Latitude"),
      num("longitude", "Longitude"),
      num("accuracy", "Accuracy in metres"),
      num("batteryLevel", "Battery level, percent"),
      str("NetworkOperatorName", "Mobile network (the API's own capital N)")
    ]
  },
  {
    name: "satisfaction-surveys",
    title: "Satisfaction surveys",
    kind: "readonly",
    path: "/satisfactionsurveys",
    ops: ["list"],
    id: { name: "id", type: "integer" },
    filters: { email: "email" },
    doc: "Answers to the satisfaction surveys sent with finished tasks",
    fields: [
      idField("Server id"),
      int("taskID", "Task (id)"),
      str("questionDescription", "Question"),
      str("answerDescription", "Answer"),
      date("answerDate", "When it was answered"),
      str("itemId", "Survey item"),
      str("email", "Respondent's e-mail", { personal: "email" }),
      int("answersItemQuantity", "Answers in the item"),
      int("scoreSum", "Sum of the scores"),
      int("totalResponse", "Responses"),
      int("totalSubmitted", "Surveys submitted")
    ]
  },
  {
    name: "quotations",
    title: "Quotations",
    kind: "readonly",
    path: "/quotations",
    ops: ["list", "get"],
    id: { name: "publicId", type: "integer" },
    filters: { customersId: "customerId", usersId: "requesterUserId" },
    doc: "Quotations (budgets) made in the web application; the API can only read them",
    fields: [
      int("publicId", "Quotation number"),
      int("customerId", "Customer (id)"),
      str("customerName", "Customer's name", { personal: "name" }),
      int("taskID", "Task (id)"),
      int("requesterUserId", "User who asked for it (id)"),
      str("observations", "Observations"),
      date("registerDate", "When it was registered"),
      date("requestDate", "When it was asked for"),
      str("descount", "Discount (the API's own spelling)"),
      f("products", { _tag: "object", shape: ["productId", "amout", "UnitaryValue"] }, "Products, as JSON", {
        list: true
      }),
      f(
        "aditionalCosts",
        { _tag: "object", shape: ["id", "costId", "description", "value"] },
        "Additional costs, as JSON (the API's own spelling)",
        { list: true }
      ),
      f("summary", {
        _tag: "object",
        shape: [
          "totalProducts",
          "totalServices",
          "totalAdditionalCosts",
          "netTotalValue",
          "grossTotalValue",
          "discount"
        ]
      }, "Totals, as JSON"),
      f("CurrentStage", {
        _tag: "object",
        shape: ["id", "description", "position", "changeStock", "isCancelled", "editAllowed"]
      }, "Stage of the quotation, as JSON")
    ]
  }
]

export const resources: ReadonlyMap<ResourceName, Resource> = new Map(table.map((r) => [r.name, r]))

export const resource = (name: ResourceName): Resource => resources.get(name)!

export const isResourceName = (s: string): s is ResourceName => resources.has(s as ResourceName)

/** Resources a template can be written for and a file imported into. */
export const importable: ReadonlyArray<Resource> = table.filter((r) => r.kind !== "readonly")

/** Resources an export reads (every list endpoint and the read-only lists). */
export const exportable: ReadonlyArray<Resource> = table.filter((r) => r.ops.includes("list"))

/** Fields a user fills in a template (server-assigned ones are left out). */
export const writableFields = (r: Resource): ReadonlyArray<Field> => r.fields.filter((x) => !x.readOnly)

/** The property that carries a field in read-back bodies. */
export const readName = (x: Field): string => x.readAs ?? x.name

/** The property that carries the server id in read-back bodies. */
export const idReadName = (r: Resource): string | undefined => r.id && (r.id.readAs ?? r.id.name)

/** Resources this one references (parents must be loaded first), self-references left out. */
export const dependencies = (r: Resource): ReadonlyArray<ResourceName> => {
  const deps = new Set<ResourceName>()
  if (r.parent) deps.add(r.parent.resource)
  for (const x of r.fields) if (x.ref && x.ref.resource !== r.name) deps.add(x.ref.resource)
  return [...deps]
}

/**
 * Importable resources in dependency order (parents before children). Throws on a cycle, naming it: the table is
 * static, so a cycle is a programming error caught by the tests; workbooks choose a subset of this order.
 */
export const dependencyOrder = (
  names: ReadonlyArray<ResourceName> = importable.map((r) => r.name),
  /** The edges to follow (default: the table's `dependencies`); onboarding's tests give their own graph. */
  dependenciesOf: (name: ResourceName) => ReadonlyArray<ResourceName> = (n) => dependencies(resource(n))
): ReadonlyArray<ResourceName> => {
  const wanted = new Set(names)
  const order: Array<ResourceName> = []
  const state = new Map<ResourceName, "visiting" | "done">()
  const visit = (n: ResourceName, path: ReadonlyArray<ResourceName>) => {
    const s = state.get(n)
    if (s === "done") return
    if (s === "visiting") throw new Error(`reference cycle: ${[...path.slice(path.indexOf(n)), n].join(" → ")}`)
    state.set(n, "visiting")
    for (const d of dependenciesOf(n)) if (wanted.has(d)) visit(d, [...path, n])
    state.set(n, "done")
    order.push(n)
  }
  for (const n of importable.map((r) => r.name)) if (wanted.has(n)) visit(n, [])
  return order
}

// --- columns -------------------------------------------------------------------------------------------------

/** Separator of list cells (`2|3|4`): neither `,` nor `;`, which are CSV delimiters and decimal marks. */
export const listSeparator = "|"

export interface Column {
  readonly name: string
  readonly field: Field
  /** `value`: the field itself; `ref`: the field's reference column (names the record by its key). */
  readonly role: "value" | "ref"
}

/** Columns of a template and of an import file: each writable field, then its reference column if it has one. */
export const templateColumns = (r: Resource): ReadonlyArray<Column> =>
  writableFields(r).flatMap((field): Array<Column> =>
    field.ref
      ? [{ name: field.name, field, role: "value" }, { name: field.ref.column, field, role: "ref" }]
      : [{ name: field.name, field, role: "value" }]
  )

/** Columns of an export file: the template's, then the read-only fields the server assigns. */
export const exportColumns = (r: Resource): ReadonlyArray<Column> => [
  ...templateColumns(r),
  ...r.fields.filter((x) => x.readOnly).map((field): Column => ({ name: field.name, field, role: "value" }))
]

/** The property of a referenced record that a reference column holds (`externalId`, `login`, `description` …). */
export const refKey = (ref: Reference): string => ref.by ?? resource(ref.resource).key ?? "id"
