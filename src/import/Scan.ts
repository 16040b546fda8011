/**
 * The first pass of an import over its source: every row validated once, to count the rows and to gather what is
 * then looked up in batches before anything is sent — the values the rows refer to in other resources, the keys
 * and ids of the records they write — and the order self-references impose (a row naming a record that another
 * row of the same file creates waits for a later pass).
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { InputError } from "../Errors.js"
import type { SourceRow } from "../files/Source.js"
import { keyText, normalKey } from "../Identity.js"
import type { ResourceName } from "../Resources.js"
import type { RowValidator } from "../validate/Validate.js"
import type { RefDemand } from "./Refs.js"

/** What the scan must collect, decided by the mode and the resource. */
export interface ScanNeeds {
  /** Rows an earlier session finished that need nothing more (resume). */
  readonly skip: (row: number) => boolean
  /** Whether the record a row writes is looked up by its key, or (without a key) by its id. */
  readonly lookByKey: (row: number) => boolean
  readonly lookById: boolean
  /** The resource's own name and the properties its self-references match (`externalId` of equipments). */
  readonly resource: ResourceName
  readonly selfRefs: ReadonlyArray<string>
  /** Fields a mapping profile names as alternate keys (`cpfCnpj`): their values are looked up too. */
  readonly alternates: ReadonlyArray<string>
}

/** A row that refers to records of its own resource. */
interface SelfReference {
  /** The values other rows can refer to this row by, per property (as keys: `normalKey`). */
  readonly own: ReadonlyMap<string, string>
  readonly needs: ReadonlyArray<{ readonly by: string; readonly value: string }>
}

export interface ScanResult {
  readonly total: number
  readonly demands: ReadonlyArray<RefDemand>
  readonly keys: ReadonlySet<string>
  readonly ids: ReadonlySet<string>
  /** Per property, the values the file's own rows write (what self-references may find in the file; `normalKey`). */
  readonly produced: ReadonlyMap<string, ReadonlySet<string>>
  readonly selfReferences: ReadonlyMap<number, SelfReference>
  /** Per alternate key field, the values the rows send (as sent: a CPF/CNPJ's digits). */
  readonly alternates: ReadonlyMap<string, ReadonlySet<string>>
}

const add = <K, V>(map: Map<K, Set<V>>, key: K, value: V) => {
  const set = map.get(key)
  if (set === undefined) map.set(key, new Set([value]))
  else set.add(value)
}

export const scanRows = Effect.fn("Import.scan")(function*(
  rows: Stream.Stream<SourceRow, InputError>,
  validator: RowValidator,
  needs: ScanNeeds
) {
  let total = 0
  const demands = new Map<string, { resource: ResourceName; by: string; values: Set<string> }>()
  const keys = new Set<string>()
  const ids = new Set<string>()
  const produced = new Map<string, Set<string>>()
  const selfReferences = new Map<number, SelfReference>()
  const alternates = new Map<string, Set<string>>()
  yield* Stream.runForEach(rows, (row) =>
    Effect.map(validator.validate(row), (result) => {
      total += 1
      if (needs.skip(result.row) || result._tag !== "Valid") return
      for (const ref of result.refs) {
        const k = `${ref.resource}\u0000${ref.by}`
        let d = demands.get(k)
        if (d === undefined) demands.set(k, d = { resource: ref.resource, by: ref.by, values: new Set() })
        for (const v of ref.values) d.values.add(v.trim())
      }
      if (result.key !== undefined && needs.lookByKey(result.row)) keys.add(result.key.trim())
      else if (result.key === undefined && result.id !== undefined && needs.lookById) ids.add(String(result.id))
      for (const by of needs.alternates) {
        const v = keyText(result.payload[by]).trim()
        if (v !== "") add(alternates, by, v)
      }
      if (needs.selfRefs.length === 0) return
      const own = new Map<string, string>()
      for (const by of needs.selfRefs) {
        const v = normalKey(keyText(result.payload[by]))
        if (v === "") continue
        own.set(by, v)
        add(produced, by, v)
      }
      const wanted = result.refs
        .filter((ref) => ref.resource === needs.resource)
        .flatMap((ref) => ref.values.map((value) => ({ by: ref.by, value: normalKey(value) })))
      if (wanted.length > 0) selfReferences.set(result.row, { own, needs: wanted })
    }))
  return {
    total,
    demands: [...demands.values()],
    keys,
    ids,
    produced,
    selfReferences,
    alternates
  } satisfies ScanResult
})

/**
 * The rows that must wait for other rows of the file: those naming a value another row writes and the server
 * does not hold yet (`known` tells whether it does).
 */
export const waitingRows = (scan: ScanResult, known: (by: string, value: string) => Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    const waiting = new Map<number, SelfReference>()
    for (const [row, ref] of scan.selfReferences) {
      const fromFile = ref.needs.filter((n) =>
        scan.produced.get(n.by)?.has(n.value) === true && ref.own.get(n.by) !== n.value
      )
      if (fromFile.length === 0) continue
      const found = yield* Effect.forEach(fromFile, (n) => known(n.by, n.value))
      if (!found.every((x) => x)) waiting.set(row, ref)
    }
    return waiting
  })

/** The waiting rows whose references no other waiting row writes (all of them when they form a cycle). */
export const nextReady = (waiting: ReadonlyMap<number, SelfReference>): ReadonlySet<number> => {
  const pending = new Map<string, Set<string>>()
  for (const w of waiting.values()) for (const [by, v] of w.own) add(pending, by, v)
  const ready = [...waiting]
    .filter(([, w]) => w.needs.every((n) => w.own.get(n.by) === n.value || !pending.get(n.by)?.has(n.value)))
    .map(([row]) => row)
  return new Set(ready.length > 0 ? ready : waiting.keys())
}
