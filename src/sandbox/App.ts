/**
 * The sandbox's HTTP application: every request is logged, delayed by the latency fault, counted against the
 * per-IP budget (403 over it), exposed to the random faults (connection reset, 500/502/503), routed, logged in,
 * type-checked and handled under the store's lock; a write may then lose its response (drop-after-write).
 * Every response carries a fresh `X-Request-Id`, and every error body is `{"error": "..."}` (or, with
 * `errorBodies: "blueprint"`, the Blueprint's `{message, target, errorCode, errors}` for all but the rate limit).
 * The live limits (api-notes, "Live behaviour reported by more public clients") are faults: bursts of 404/500 above
 * N requests in flight on one token, list answers slowed in proportion to their records, 500 for an empty
 * filtered list.
 *
 * The steps a request runs through (here and in Records, Fields, Lists, Tasks, Specials, Attachments, Login) are
 * `Effect.fnUntraced`, not the house's `Effect.fn("Module.name")`: a request runs with tracing off (Sandbox.ts), so
 * their names reached no trace, while each call still captured a stack for its span, about a fifth of the
 * sandbox's CPU a request (issue 26, docs/benchmarks.md). Start-up code (Command.ts, Persistence.ts) keeps its names.
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import { randomUUID } from "node:crypto"
import type { Resource } from "../Resources.js"
import { idReadName, resource } from "../Resources.js"
import { putAttachments } from "./Attachments.js"
import type { Call, CallSettings } from "./Call.js"
import type { Faults } from "./Faults.js"
import { parseFilter, readContext } from "./Lists.js"
import type { Credentials } from "./Login.js"
import { givenCredentials, login } from "./Login.js"
import type { Budget } from "./RateLimit.js"
import { derive } from "./ReadBack.js"
import * as Records from "./Records.js"
import type { Action } from "./Routes.js"
import { match } from "./Routes.js"
import { listChildren, putStock, serviceCatalog, writeComplete } from "./Specials.js"
import type { Store } from "./Store.js"
import { deleteItems, queueAnswer, rememberDeletedTask, settleAnswers, upsertItems } from "./Tasks.js"
import type { Tokens } from "./Tokens.js"
import type { Outcome } from "./Wire.js"
import { HttpFailure, reject } from "./Wire.js"

/** Largest request body read: attachments are up to 10 MiB each, base64 adds a third. */
const maxBodyBytes = 64 * 1024 * 1024

export interface LogEntry {
  readonly at: number
  readonly method: string
  readonly path: string
  status: number | undefined
  apiKey: string | undefined
  applied: boolean
  /** The client's address (the per-IP budget's key). */
  readonly client?: string
  /** Requests in flight on this request's token when it arrived, itself included (0: no token). */
  inFlight: number
  /** When its answer was handed to the connection (latency, page latency included); undefined until then. */
  answeredAt?: number
}

interface AppEnv {
  readonly accounts: ReadonlyArray<Credentials>
  readonly settings: CallSettings
  readonly store: Store
  readonly tokens: Tokens
  readonly budget: Budget
  readonly faults: Ref.Ref<Faults>
  readonly log: Array<LogEntry>
  readonly lock: Effect.Semaphore
  readonly markDirty: Effect.Effect<void>
  /** Requests being handled, by `Authorization` header (one token). */
  readonly inFlight: Map<string, number>
  /** The faults' dice, when seeded (`SandboxOptions.faultSeed`). */
  readonly random?: Random.Random | undefined
}

type Answer = { readonly _tag: "Reply"; readonly outcome: Outcome } | {
  readonly _tag: "Destroy"
  readonly applied: boolean
}

const reply = (outcome: Outcome): Answer => ({ _tag: "Reply", outcome })
const failure = (status: number, error: string): Answer => reply({ status, body: { error }, applied: false })
const rateLimited = "Rate limit temporarily exceeded"

/** An error body in the shape the settings ask for; the rate limit's is `{"error"}` either way. */
const errorBody = (settings: CallSettings, body: unknown): unknown => {
  if (settings.errorBodies !== "blueprint" || !Predicate.isRecord(body) || typeof body["error"] !== "string") {
    return body
  }
  if (body["error"] === rateLimited) return body
  return { message: body["error"], target: null, errorCode: 0, errors: null }
}

/** The records of a list answer, when `outcome` is one. */
const listedRecords = (outcome: Outcome): number | undefined => {
  const result = Predicate.isRecord(outcome.body) ? outcome.body["result"] : undefined
  const list = Predicate.isRecord(result) ? result["entityList"] : undefined
  return Array.isArray(list) ? list.length : undefined
}

/** The call filters its list by more than a date window. */
const filtered = (query: ReadonlyMap<string, string>): boolean => {
  const text = query.get("paramfilter")
  const parsed = text === undefined ? undefined : parseFilter(text)
  return Predicate.isRecord(parsed) &&
    Object.entries(parsed).some(([k, v]) =>
      !/^(startdate|enddate)$/i.test(k) && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0)
    )
}

const writeMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])
const isJson = (contentType: string | undefined) =>
  contentType !== undefined && /^\s*application\/([\w.+-]+\+)?json\b/i.test(contentType)

const roll = (
  probability: number
) => (probability <= 0 ? Effect.succeed(false) : Effect.map(Random.next, (x) => x < probability))

const recordOperation = (
  action: Extract<Action, { _tag: "Record" }>,
  call: Call
): Effect.Effect<Outcome, HttpFailure> => {
  const r = action.resource
  switch (action.op) {
    case "list":
      return Records.list(r, call)
    case "create":
      return Records.create(r, call)
    case "upsert":
      return Records.upsert(r, call)
    case "get":
      return Records.get(r, call)
    case "patch":
      return Records.patch(r, call)
    case "update":
      return Records.update(r, call)
    case "delete":
      // Deleted tasks stay listed by GET /tasks/GetDeletedTasks.
      return Records.remove(
        r,
        call,
        r.name === "tasks" ? (task) => rememberDeletedTask(call.account, task, call.now) : undefined
      )
  }
}

/** The resource whose whole record an answer to `action` carries (a sub-collection or attachment write: its parent). */
const answeredRecord = (action: Exclude<Action, { _tag: "Login" }>): Resource | undefined => {
  switch (action._tag) {
    case "Record":
      return action.op === "list" || action.op === "delete" ? undefined : action.resource
    case "SubCollection":
    case "Attachments":
      return action.resource.parent !== undefined ? resource(action.resource.parent.resource) : undefined
    case "Complete":
      return action.target
    default:
      return undefined
  }
}

/**
 * A single-record answer with the properties the service derives from other records (lists derive theirs as they
 * page): the record is read again from the store under its id, so the derivation sees what was just written.
 */
const withDerived = (action: Exclude<Action, { _tag: "Login" }>, call: Call, outcome: Outcome): Outcome => {
  const r = answeredRecord(action)
  const body = outcome.body as { result?: unknown } | undefined
  if (r === undefined || r.id === undefined || body === undefined || !Predicate.isRecord(body.result)) return outcome
  const id = body.result[idReadName(r)!]
  const stored = id === undefined ? undefined : call.account.table(r.name).get(id)
  if (stored === undefined) return outcome
  return { ...outcome, body: { ...body, result: derive(r, body.result, stored, readContext(call)) } }
}

const dispatch = (action: Exclude<Action, { _tag: "Login" }>, call: Call): Effect.Effect<Outcome, HttpFailure> => {
  switch (action._tag) {
    case "Record":
      return recordOperation(action, call)
    case "SubCollection":
      return action.op === "upsert" ? upsertItems(action.resource, call) : deleteItems(action.resource, call)
    case "Attachments":
      return putAttachments(action.resource, call)
    case "Answer":
      return queueAnswer(action.resource, call)
    case "Stock":
      return putStock(action.resource, call)
    case "Complete":
      return writeComplete(action.resource, action.target, action.op, call)
    case "Children":
      return listChildren(action.resource, call)
    case "ServiceCatalog":
      return serviceCatalog(action.resource, call)
  }
}

const tooLarge = () => reject(413, `the request body is larger than ${maxBodyBytes / 1024 / 1024} MiB`)

/**
 * The body as text, at most `maxBodyBytes` kept. An oversized body is still read to its end (and dropped) before
 * the 413 is sent: a client is still writing it, and a connection closed under it shows a reset, not the 413.
 * A Content-Length over the limit is answered without reading: Node discards the rest once the answer is sent.
 */
const bodyText = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<string, HttpFailure> => {
  if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return tooLarge()
  const incoming = NodeHttpServerRequest.toIncomingMessage(request)
  return Effect.async<string, HttpFailure>((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes <= maxBodyBytes) chunks.push(chunk)
      else chunks.length = 0
    }
    const onEnd = () =>
      resume(bytes > maxBodyBytes ? tooLarge() : Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    const onError = () => resume(reject(400, "the request body could not be read"))
    // A client gone in the middle of its body: nothing more will come.
    const onClose = () => {
      if (!incoming.complete) onError()
    }
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    incoming.once("close", onClose)
    return Effect.sync(() => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
      incoming.off("close", onClose)
    })
  })
}

const readBody = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
  const text = yield* bodyText(request)
  if (text.trim() === "") return undefined
  return yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) =>
      new HttpFailure({ status: 400, error: `malformed JSON: ${e instanceof Error ? e.message : String(e)}` })
  })
})

const handle = Effect.fnUntraced(
  function*(env: AppEnv, request: HttpServerRequest.HttpServerRequest, entry: LogEntry) {
    const faults = yield* Ref.get(env.faults)
    if (faults.latencyMs > 0) yield* Effect.sleep(faults.latencyMs)
    const now = yield* Clock.currentTimeMillis
    const client = Option.getOrElse(request.remoteAddress, () => "unknown")
    if (now < faults.rateLimitStormUntil || !env.budget.admit(client, now)) {
      return failure(403, rateLimited)
    }
    if (yield* roll(faults.resetRate)) return { _tag: "Destroy", applied: false } satisfies Answer as Answer
    if (yield* roll(faults.failRate)) {
      const status = [500, 502, 503][Math.floor((yield* Random.next) * 3)]!
      return failure(
        status,
        status === 500 ? "Internal server error" : status === 502 ? "Bad Gateway" : "Service Unavailable"
      )
    }

    let url: URL
    try {
      url = new URL(request.url, `http://${request.headers["host"] ?? "127.0.0.1"}`)
    } catch {
      return failure(400, "malformed request URL")
    }
    const versioned = /^\/v2(\/.*)?$/i.exec(url.pathname)
    if (!versioned) return failure(404, `no API at ${url.pathname}: paths start with /v2`)
    const found = match(request.method, versioned[1] ?? "/")
    if (found._tag === "NotFound") return failure(404, `no endpoint ${request.method} ${url.pathname}`)
    if (found._tag === "MethodNotAllowed") {
      return failure(405, `${request.method} is not allowed on ${url.pathname} (allowed: ${found.allowed.join(", ")})`)
    }
    const query = new Map<string, string>()
    for (const [name, value] of url.searchParams) {
      if (!query.has(name.toLowerCase())) query.set(name.toLowerCase(), value)
    }
    const action = found.route.action

    if (action._tag !== "Login") {
      const verified = env.tokens.verify(request.headers["authorization"], now)
      if (verified._tag === "Invalid") return failure(401, verified.reason)
      if (!env.accounts.some((a) => a.apiKey === verified.apiKey)) return failure(401, "Invalid token")
      entry.apiKey = verified.apiKey
      const busy = env.inFlight.get(request.headers["authorization"] ?? "") ?? 0
      if (faults.burstAbove > 0 && busy > faults.burstAbove && (yield* roll(faults.burstRate))) {
        return (yield* roll(0.5)) ? failure(404, "No records found") : failure(500, "Internal server error")
      }
    }
    if (request.method === "POST" && !isJson(request.headers["content-type"])) {
      return failure(
        415,
        "Content-Type must be application/json"
      )
    }
    const body = writeMethods.has(request.method) ? yield* readBody(request) : undefined

    if (action._tag === "Login") {
      const given = yield* givenCredentials(request.method, body, query)
      const { apiKey, outcome } = yield* login(env.accounts, env.tokens, given, now)
      entry.apiKey = apiKey
      return reply(outcome)
    }

    const apiKey = entry.apiKey!
    const isList = request.method === "GET" && action._tag === "Record" && action.op === "list"
    const handled = yield* env.lock.withPermits(1)(
      Effect.suspend(() => {
        const account = env.store.account(apiKey)
        const settled = settleAnswers(account, now)
        const call: Call = { apiKey, account, id: found.id, query, body, now, url, settings: env.settings }
        return dispatch(action, call).pipe(
          Effect.map((outcome) => withDerived(action, call, outcome)),
          Effect.ensuring(settled ? env.markDirty : Effect.void)
        )
      })
    ).pipe(Effect.either)
    const empty = Either.isLeft(handled) ? handled.left.status === 404 : listedRecords(handled.right) === 0
    if (isList && empty && filtered(query) && (yield* roll(faults.emptyListFailRate))) {
      return failure(500, "Internal server error")
    }
    if (Either.isLeft(handled)) return yield* handled.left
    const outcome = handled.right
    const records = listedRecords(outcome)
    if (records !== undefined && faults.pageLatencyPerRecordMs > 0) {
      yield* Effect.sleep(faults.pageLatencyPerRecordMs * Math.max(1, records))
    }
    if (outcome.applied) yield* env.markDirty
    if (outcome.applied && writeMethods.has(request.method) && (yield* roll(faults.dropAfterWriteRate))) {
      return { _tag: "Destroy", applied: true } satisfies Answer as Answer
    }
    return reply(outcome)
  }
)

export const makeApp = (env: AppEnv) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const entry: LogEntry = {
      at: yield* Clock.currentTimeMillis,
      method: request.method,
      path: request.url.split("?")[0]!,
      status: undefined,
      apiKey: undefined,
      applied: false,
      client: Option.getOrElse(request.remoteAddress, () => "unknown"),
      inFlight: 0
    }
    env.log.push(entry)
    const token = request.headers["authorization"]
    if (token !== undefined) {
      entry.inFlight = (env.inFlight.get(token) ?? 0) + 1
      env.inFlight.set(token, entry.inFlight)
    }
    const handled = handle(env, request, entry)
    const answer = yield* (env.random === undefined ? handled : Effect.withRandom(handled, env.random)).pipe(
      Effect.ensuring(Effect.sync(() => {
        if (token === undefined) return
        const left = (env.inFlight.get(token) ?? 1) - 1
        if (left <= 0) env.inFlight.delete(token)
        else env.inFlight.set(token, left)
      })),
      Effect.catchTag("HttpFailure", (e) =>
        Effect.succeed(
          e.errorCode === undefined
            ? failure(e.status, e.error)
            : reply({
              status: e.status,
              body: { message: e.error, target: null, errorCode: e.errorCode, errors: null },
              applied: false
            })
        )),
      // A defect is a sandbox bug: still answer in the service's error shape, and say so on stderr.
      Effect.catchAllDefect((defect) =>
        Effect.sync(() => {
          process.stderr.write(
            `sandbox: internal error on ${entry.method} ${entry.path}: ${
              defect instanceof Error ? (defect.stack ?? defect.message) : String(defect)
            }\n`
          )
          return failure(500, "Internal server error")
        })
      )
    )
    entry.answeredAt = yield* Clock.currentTimeMillis
    if (answer._tag === "Destroy") {
      entry.applied = answer.applied
      // The client sees the connection reset and no response at all.
      NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
      return HttpServerResponse.empty({ status: 500 })
    }
    const { status, applied } = answer.outcome
    const body = status >= 400 ? errorBody(env.settings, answer.outcome.body) : answer.outcome.body
    entry.status = status
    entry.applied = applied
    const headers = { "x-request-id": randomUUID() }
    return body === undefined
      ? HttpServerResponse.empty({ status, headers })
      : HttpServerResponse.unsafeJson(body, { status, headers })
  })
