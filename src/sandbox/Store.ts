/**
 * The sandbox's state: per account, one table of stored records per resource (write names, as sent), the id
 * counters and the questionnaire answers still in the queue. Everything here is synchronous and is only touched
 * under the sandbox's lock; `snapshot`/`restore` give the JSON kept in the `--data` file, and `changes`/`replay`
 * the lines of its change log (every record written since the last snapshot, see `Persistence.ts`).
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import type { Resource, ResourceName } from "../Resources.js"
import { isResourceName, resource } from "../Resources.js"

export type Rec = Record<string, unknown>

/** The key a record is stored under: its id as text, lower-cased (GUIDs compare case-insensitively). */
export const idKey = (id: unknown): string => String(id).trim().toLowerCase()

/** How unique values and string filters compare: trimmed, case-insensitive (the service's collation). */
export const sameText = (a: unknown, b: unknown): boolean => normText(a) === normText(b)
const normText = (value: unknown): string => String(value).trim().toLowerCase()

/** Name of the property that holds the server id in stored records (`id`; service orders: `code`). */
export const idName = (r: Resource): string => r.id?.name ?? "id"

/**
 * The key a record is stored under: its id, or for resources without one (employee stock) the ids of its
 * required references (`userId:productId`), so a second write for the same pair replaces the first.
 */
export const keyOf = (r: Resource, rec: Rec): string =>
  r.id !== undefined
    ? idKey(rec[idName(r)])
    : r.fields
      .filter((f) => f.ref !== undefined && f.required === true)
      .map((f) => idKey(rec[f.name]))
      .join(":")

export class Table {
  private readonly rows = new Map<string, Rec>()
  /** unique field → normalized value → key of the record holding it */
  private readonly indexes: Map<string, Map<string, string>>
  /** Told the key of every record put or removed (the change log's source). */
  onChange: ((key: string) => void) | undefined

  constructor(readonly resource: Resource) {
    this.indexes = new Map(resource.fields.filter((f) => f.unique).map((f) => [f.name, new Map<string, string>()]))
  }

  get size(): number {
    return this.rows.size
  }

  get(id: unknown): Rec | undefined {
    return this.rows.get(idKey(id))
  }

  /** Records in creation order (which is id order for integer ids). */
  values(): Array<Rec> {
    return [...this.rows.values()]
  }

  /** The record stored under `key` (a key from `keyOf`/`idKey`). */
  atKey(key: string): Rec | undefined {
    return this.rows.get(key)
  }

  put(key: string, rec: Rec): void {
    this.onChange?.(key)
    this.unindex(key)
    this.rows.set(key, rec)
    for (const [field, index] of this.indexes) {
      const value = rec[field]
      if (value !== undefined && value !== null && value !== "") index.set(normText(value), key)
    }
  }

  remove(id: unknown): Rec | undefined {
    const key = idKey(id)
    const rec = this.rows.get(key)
    if (rec === undefined) return undefined
    this.onChange?.(key)
    this.unindex(key)
    this.rows.delete(key)
    return rec
  }

  /** The record holding `value` in a unique field. */
  findUnique(field: string, value: unknown): Rec | undefined {
    const key = this.indexes.get(field)?.get(normText(value))
    return key === undefined ? undefined : this.rows.get(key)
  }

  private unindex(key: string): void {
    const old = this.rows.get(key)
    if (old === undefined) return
    for (const [field, index] of this.indexes) {
      const value = old[field]
      if (value !== undefined && value !== null && index.get(normText(value)) === key) index.delete(normText(value))
    }
  }
}

/** A questionnaire answer accepted (202) and not yet visible on its task. */
interface PendingAnswer {
  readonly taskId: number
  readonly receivedAt: number
  readonly visibleAt: number
  readonly answer: Rec
}

export class Account {
  readonly tables = new Map<ResourceName, Table>()
  readonly nextIds = new Map<ResourceName, number>()
  pendingAnswers: Array<PendingAnswer> = []
  /** Keys of the records written since the change log last took them, per table (only with a change log). */
  readonly touched = new Map<ResourceName, Set<string>>()
  tracking = false
  /** The queue of answers as the change log last wrote it (it is replaced or pushed to in place). */
  private logged: { readonly list: Array<PendingAnswer>; readonly length: number } = {
    list: this.pendingAnswers,
    length: 0
  }

  table(name: ResourceName): Table {
    let t = this.tables.get(name)
    if (t === undefined) {
      t = new Table(resource(name))
      t.onChange = (key) => {
        if (!this.tracking) return
        let keys = this.touched.get(name)
        if (keys === undefined) this.touched.set(name, keys = new Set())
        keys.add(key)
      }
      this.tables.set(name, t)
    }
    return t
  }

  /** Whether the queue of answers changed since the change log last wrote it; marks it written. */
  takeAnswersChanged(): boolean {
    const changed = this.logged.list !== this.pendingAnswers || this.logged.length !== this.pendingAnswers.length
    this.logged = { list: this.pendingAnswers, length: this.pendingAnswers.length }
    return changed
  }

  /** Forgets what was written so far: the state is already on disk (just loaded or saved). */
  markLogged(): void {
    this.touched.clear()
    this.takeAnswersChanged()
  }

  /** A fresh server id: integers from 1 per account and resource, GUIDs for GUID resources. */
  newId(r: Resource): number | string {
    if (r.id?.type === "guid") return randomUUID()
    const next = this.nextIds.get(r.name) ?? 1
    this.nextIds.set(r.name, next + 1)
    return next
  }

  /**
   * Inserts (or replaces) a record under its key, keeping the counter ahead of ids from a seed or a file. A
   * server-assigned GUID the record lacks (products' `productId`, also for records of an older `--data` file) is
   * given one now.
   */
  insert(name: ResourceName, rec: Rec): void {
    const r = resource(name)
    for (const field of r.fields) {
      if (
        field.readOnly && field.type._tag === "guid" &&
        (rec[field.name] === undefined || rec[field.name] === null || rec[field.name] === "")
      ) {
        rec[field.name] = randomUUID()
      }
    }
    const id = rec[idName(r)]
    if (r.id !== undefined && typeof id === "number" && id >= (this.nextIds.get(name) ?? 1)) {
      this.nextIds.set(name, id + 1)
    }
    this.table(name).put(keyOf(r, rec), rec)
  }
}

// --- the --data file ------------------------------------------------------------------------------------------

const StoredRecord = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const PendingAnswerJson = Schema.Struct({
  taskId: Schema.Number,
  receivedAt: Schema.Number,
  visibleAt: Schema.Number,
  answer: StoredRecord
})

const NextIds = Schema.Record({ key: Schema.String, value: Schema.Number })

const AccountSnapshot = Schema.Struct({
  nextIds: NextIds,
  tables: Schema.Record({ key: Schema.String, value: Schema.Array(StoredRecord) }),
  pendingAnswers: Schema.Array(PendingAnswerJson)
})

const StoreSnapshot = Schema.Struct({
  version: Schema.Literal(1),
  accounts: Schema.Record({ key: Schema.String, value: AccountSnapshot })
})
type StoreSnapshot = typeof StoreSnapshot.Type

/** A line of the change log (see `changes`): one record set (`r`) or removed (`r: null`), or an account's counters. */
const ChangeLine = Schema.parseJson(Schema.Union(
  Schema.Struct({ a: Schema.String, t: Schema.String, k: Schema.String, r: Schema.NullOr(StoredRecord) }),
  Schema.Struct({ a: Schema.String, n: NextIds, p: Schema.Array(PendingAnswerJson) })
))
const decodeChangeLine = Schema.decodeUnknownOption(ChangeLine)

export class Store {
  readonly accounts = new Map<string, Account>()
  private tracking = false

  constructor(
    private readonly seed: (account: Account) => void,
    /** What a new account holds besides the seed (`--seed EXPORT_DIR`); not applied to accounts restored from a file. */
    private readonly fresh?: (account: Account) => void
  ) {}

  /** The account of an apiKey, created (and seeded) on first use. */
  account(apiKey: string): Account {
    let a = this.accounts.get(apiKey)
    if (a === undefined) {
      a = new Account()
      a.tracking = this.tracking
      this.seed(a)
      this.fresh?.(a)
      this.accounts.set(apiKey, a)
    }
    return a
  }

  /** From now on, writes are remembered for `changes` (the `--data` change log). */
  trackChanges(): void {
    this.tracking = true
    for (const a of this.accounts.values()) a.tracking = true
  }

  /** Forgets what was written so far: the state is already on disk (just loaded). */
  markLogged(): void {
    for (const a of this.accounts.values()) a.markLogged()
  }

  /**
   * The change-log lines of everything written since the last call, one JSON object a line: `{a, t, k, r}` sets
   * (or with `r: null` removes) one record, `{a, n, p}` sets an account's id counters and answer queue.
   */
  changes(): string {
    let out = ""
    for (const [apiKey, a] of this.accounts) {
      const answers = a.takeAnswersChanged()
      if (a.touched.size === 0 && !answers) continue
      for (const [name, keys] of a.touched) {
        const t = a.table(name)
        for (const k of keys) out += `${JSON.stringify({ a: apiKey, t: name, k, r: t.atKey(k) ?? null })}\n`
      }
      a.touched.clear()
      out += `${JSON.stringify({ a: apiKey, n: Object.fromEntries(a.nextIds), p: a.pendingAnswers })}\n`
    }
    return out
  }

  /** Applies one change-log line; false when it is not one (a line cut by a crash, or damaged). */
  replay(line: string): boolean {
    const decoded = decodeChangeLine(line)
    if (Option.isNone(decoded)) return false
    const change = decoded.value
    const a = this.account(change.a)
    if ("t" in change) {
      if (!isResourceName(change.t)) return true
      if (change.r === null) a.table(change.t).remove(change.k)
      else a.table(change.t).put(change.k, { ...change.r })
      return true
    }
    for (const [name, next] of Object.entries(change.n)) if (isResourceName(name)) a.nextIds.set(name, next)
    a.pendingAnswers = [...change.p]
    return true
  }

  snapshot(): StoreSnapshot {
    const accounts: Record<string, typeof AccountSnapshot.Type> = {}
    for (const [apiKey, a] of this.accounts) {
      accounts[apiKey] = {
        nextIds: Object.fromEntries(a.nextIds),
        tables: Object.fromEntries([...a.tables].map(([name, t]) => [name, t.values()])),
        pendingAnswers: a.pendingAnswers
      }
    }
    return { version: 1, accounts }
  }

  /** Replaces the state with a snapshot read from the `--data` file; Left names what is wrong with it. */
  restore(json: unknown): Either.Either<void, string> {
    return Either.map(
      Either.mapLeft(Schema.decodeUnknownEither(StoreSnapshot)(json), (e) => e.message),
      (snapshot) => {
        this.accounts.clear()
        for (const [apiKey, s] of Object.entries(snapshot.accounts)) {
          const a = new Account()
          a.tracking = this.tracking
          for (const [name, rows] of Object.entries(s.tables)) {
            if (!isResourceName(name)) continue
            for (const rec of rows) a.insert(name, { ...rec })
          }
          for (const [name, next] of Object.entries(s.nextIds)) if (isResourceName(name)) a.nextIds.set(name, next)
          a.pendingAnswers = [...s.pendingAnswers]
          this.seed(a)
          this.accounts.set(apiKey, a)
        }
      }
    )
  }
}
