/**
 * Invariants over generated histories (issue 28), the bounded run of `npm test`: a few seeded histories of
 * imports in every mode, dry runs, reruns, interrupted runs resumed, undos, exports re-imported, a second actor
 * on the server and the sandbox's faults, with the invariants checked after every step (see model.ts).
 *
 * HISTORY_SEED=123 replays one seed (and shrinks it when it fails); HISTORY_JSON='[…]' replays a printed
 * history; HISTORY_ALL=1 includes the features `KNOWN_OPEN` leaves out; HISTORY_COUNT and HISTORY_LENGTH size
 * the run; HISTORY_VERBOSE=1 prints every history's steps; HISTORY_CLI=1 adds the built CLI killed with SIGKILL (a soak seed's replay: build first). `npm run soak`
 * runs thousands (scripts/soak.mjs).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { aliasRow } from "./files.js"
import type { FileShape, Row } from "./files.js"
import { knownHistories } from "./known.js"
import type { Action, Feature } from "./model.js"
import { allFeatures, drawnKinds, generateHistory, KNOWN_OPEN } from "./model.js"
import { checkSeed, describeFailure, featuresOf, runOne } from "./support.js"

const env = process.env
const all = env.HISTORY_ALL === "1"
// HISTORY_CLI=1 (a soak seed's replay): the built CLI killed with SIGKILL among the actions; build first.
// HISTORY_FEATURES=a,b: these of KNOWN_OPEN's features on top of the bounded run's (to see one defect at a time).
const features = new Set<Feature>([
  ...featuresOf(all),
  ...(env.HISTORY_FEATURES ?? "").split(",").filter((f): f is Feature =>
    (allFeatures as ReadonlyArray<string>).includes(f)
  ),
  ...(env.HISTORY_CLI === "1" ? ["cli" as const] : [])
])
const length = Number(env.HISTORY_LENGTH ?? 10)
/**
 * The seeds of the bounded run, 1000–1007 (`HISTORY_COUNT=N`: 1000 to 1000+N-1): with the fixed histories below they
 * meet every kind of action the generator draws (the test "the bounded run meets every kind" holds them to it). Four
 * of them (1001, 1002, 1004, 1007) would meet every kind too, at about 5 s less CPU; all eight are kept for the
 * combinations of steps the other four draw (a defect met only in one order of actions). `npm run soak` runs hundreds.
 */
const seeds = env.HISTORY_SEED !== undefined
  ? [Number(env.HISTORY_SEED)]
  : Array.from({ length: Number(env.HISTORY_COUNT ?? 8) }, (_, i) => 1000 + i)
const replayOf = (seed: number) =>
  `HISTORY_SEED=${seed}${all ? " HISTORY_ALL=1" : ""}${
    env.HISTORY_FEATURES ? ` HISTORY_FEATURES=${env.HISTORY_FEATURES}` : ""
  }${env.HISTORY_FOCUS ? ` HISTORY_FOCUS=${env.HISTORY_FOCUS}` : ""}${env.HISTORY_CLI === "1" ? " HISTORY_CLI=1" : ""}${
    env.HISTORY_LENGTH ? ` HISTORY_LENGTH=${length}` : ""
  } npx vitest run test/history/history.test.ts`

const soakFindings = JSON.parse(
  readFileSync(new URL("./found.json", import.meta.url), "utf8")
) as ReadonlyArray<{ readonly seed: number; readonly why: string; readonly history: Array<Action> }>

// The users flow is one action among many in the seeded histories: this history makes sure each run meets it,
// a user created by the first step and met again (existing) by the second.
const usersHistory: ReadonlyArray<Action> = [
  {
    kind: "users",
    users: ["USR-01", "USR-02"],
    passwords: [["Senha@111111", "Senha@222222"], ["Senha@333333", "Senha@444444"], [
      "Senha@555555",
      "Senha@666666"
    ]]
  },
  {
    kind: "users",
    users: ["USR-02", "USR-03"],
    passwords: [["Senha@777777", "Senha@888888"], ["Senha@999999", "Senha@121212"], [
      "Senha@131313",
      "Senha@141414"
    ]]
  }
]

// The actions of the features added after the generator (onboarding plans, Portuguese headers, export folders
// onboarded, --lang pt-BR) at their modest weights may miss a bounded run: this history meets each once, the plan
// applied both as approved and after the actor changed a planned record (its row must be `conflict`).
const newFeaturesHistory: ReadonlyArray<Action> = (() => {
  const row = (key: string, name: string, note: string) => ({
    key,
    name,
    note,
    phone: "+55 11 91234-5678",
    address: "Rua Augusta, 100 - Consolação",
    active: true,
    visit: 45,
    lat: "-23.5505",
    seller: "Ana Vendedora 12",
    credit: "R$ 1.100,00"
  })
  const file = (rows: ReadonlyArray<Row>): FileShape => ({
    delimiter: ";",
    encoding: "windows-1252",
    rows,
    internal: true
  })
  const sheet = (title: boolean): FileShape => ({
    ...file([row("CLI-03", "Oficina do Zé", "Pagamento à vista"), row("CLI-04", "Ótica Visão & Cia", "")]
      .map(aliasRow)),
    style: "aliases",
    title
  })
  const plan = file([row("CLI-01", "Padaria Pão Quente", "revisado"), row("CLI-02", "Açougue São João", "novo")])
  return [
    {
      kind: "import",
      mode: "upsert",
      file: file([row("CLI-01", "Padaria Pão Quente", "antigo")]),
      dryRun: false
    },
    { kind: "onboard-plan", file: plan },
    { kind: "apply", run: 1 },
    { kind: "onboard-plan", file: file([row("CLI-01", "Padaria Pão Quente", "outra nota")]) },
    { kind: "actor-edit", record: 0, field: "name", value: "Padaria (editado)" },
    { kind: "apply", run: 3 },
    { kind: "pt-headers", mode: "upsert", file: sheet(true), map: false, dryRun: false },
    { kind: "pt-headers", mode: "upsert", file: sheet(true), map: true, dryRun: false },
    { kind: "pt-headers", mode: "update", file: sheet(false), map: false, dryRun: false },
    { kind: "export-onboard", export: undefined, other: true },
    { kind: "actor-edit", record: 1, field: "name", value: "Açougue (editado)" },
    { kind: "export-onboard", export: 0, other: true },
    { kind: "export-onboard", export: 0, other: false },
    {
      kind: "pt-br",
      mode: "upsert",
      file: file([row("CLI-05", "Lanchonete Calçadão", ""), row("CLI-06", "", "")])
    }
  ]
})()

describe("generated histories", () => {
  if (env.HISTORY_JSON !== undefined) {
    it.live("the history given in HISTORY_JSON", () =>
      Effect.gen(function*() {
        const history = JSON.parse(env.HISTORY_JSON!) as Array<Action>
        const outcome = yield* runOne(Number(env.HISTORY_SEED ?? 0), history, featuresOf(true))
        console.log(outcome.log.join("\n"))
        assert.deepStrictEqual(outcome.violations, [])
      }), 300_000)
    return
  }
  // The contract of the bounded run: each kind of action the generator draws is met at least once, by a seed or by a
  // fixed history (a generator changed so that a kind went missing needs another seed here).
  it.skipIf(env.HISTORY_SEED !== undefined)("the bounded run meets every kind of action the generator draws", () => {
    const fixed = [
      ...knownHistories.filter((k) => features.has(k.feature)).map((k) => k.history),
      usersHistory,
      newFeaturesHistory,
      ...soakFindings.map((f) => f.history)
    ]
    const met = new Set(
      [...fixed, ...seeds.map((seed) => generateHistory(seed, length, features))].flat().map((a) => a.kind)
    )
    assert.deepStrictEqual(drawnKinds(features).filter((k) => !met.has(k)), [])
  })
  for (const known of knownHistories) {
    it.live.skipIf(!features.has(known.feature))(
      `known defect ${known.feature}: ${KNOWN_OPEN[known.feature] ?? "fixed"}`,
      () =>
        Effect.gen(function*() {
          const outcome = yield* runOne(known.seed, known.history, features)
          assert.deepStrictEqual(outcome.violations, [], outcome.log.join("\n"))
        }),
      300_000
    )
  }
  it.live.skipIf(env.HISTORY_SEED !== undefined)(
    "users: passwords set on create and with --send-write-only only",
    () =>
      Effect.gen(function*() {
        const outcome = yield* runOne(0, usersHistory, features)
        assert.deepStrictEqual(outcome.violations, [], outcome.log.join("\n"))
      }),
    300_000
  )
  it.live.skipIf(env.HISTORY_SEED !== undefined)(
    "onboarding plans applied, Portuguese headers with and without a profile, export folders onboarded, pt-BR",
    () =>
      Effect.gen(function*() {
        const outcome = yield* runOne(0, newFeaturesHistory, features)
        if (env.HISTORY_VERBOSE === "1") console.log(outcome.log.join("\n"))
        assert.deepStrictEqual(outcome.violations, [], outcome.log.join("\n"))
      }),
    300_000
  )
  // Histories a soak flagged where the checker, not the tool, was wrong (test/history/found.json): kept so the checker
  // cannot go back to flagging them.
  for (const found of soakFindings) {
    it.live.skipIf(env.HISTORY_SEED !== undefined)(
      `soak finding ${found.seed}: ${found.why}`,
      () =>
        Effect.gen(function*() {
          const outcome = yield* runOne(found.seed, found.history, features)
          assert.deepStrictEqual(outcome.violations, [], outcome.log.join("\n"))
        }),
      300_000
    )
  }
  for (const seed of seeds) {
    it.live(`seed ${seed}: every invariant holds after every step`, () =>
      Effect.gen(function*() {
        const verdict = yield* checkSeed(seed, { length, features })
        if (env.HISTORY_VERBOSE === "1") console.log(`seed ${seed}\n${verdict.outcome.log.join("\n")}`)
        if (verdict.outcome.violations.length > 0) {
          const text = describeFailure(verdict, replayOf(seed))
          console.error(text)
          assert.fail(text)
        }
      }), 300_000)
  }
})
