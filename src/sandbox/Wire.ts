/**
 * What a sandbox handler answers: an `Outcome` (status, body, whether stored state changed) or an
 * `HttpFailure`, which becomes the service's error body `{"error": "..."}` with the same status (the Blueprint's
 * `{message, target, errorCode, errors}` when the failure carries the live service's own `errorCode`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class HttpFailure extends Schema.TaggedError<HttpFailure>()("HttpFailure", {
  status: Schema.Number,
  error: Schema.String,
  errorCode: Schema.optional(Schema.Number)
}) {}

export const reject = (status: number, error: string, errorCode?: number): Effect.Effect<never, HttpFailure> =>
  Effect.fail(new HttpFailure(errorCode === undefined ? { status, error } : { status, error, errorCode }))

export interface Outcome {
  readonly status: number
  /** Undefined for an empty body (204). */
  readonly body?: unknown
  /** The request changed stored state (counts as an applied write in the request log). */
  readonly applied: boolean
}

/** A success answer wrapped in the `{"result": ...}` envelope every success body of the live service has. */
export const result = (status: number, value: unknown, applied: boolean): Outcome => ({
  status,
  body: { result: value },
  applied
})

export const noContent: Outcome = { status: 204, applied: true }

/** Quotes a value for an error message without ever dumping a huge payload. */
export const show = (value: unknown): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
