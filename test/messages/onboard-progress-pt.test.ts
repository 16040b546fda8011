/**
 * The onboarding's lines (closing heading, totals, `next:` lines, where the reports are, one line per step) and the
 * import's live progress line in Portuguese when the run is; statuses and commands stay as they are.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Path from "node:path"
import { makeProgress } from "../../src/console/Progress.js"
import { setLanguage } from "../../src/Messages.js"
import { closingLines } from "../../src/onboard/CommandRun.js"
import { stepLine } from "../../src/onboard/Summary.js"
import { until } from "../import/support.js"
import { onboardInto, startTestSandbox, tempDir, writeFamily } from "../onboard/support.js"

/** Runs `effect` with messages in Portuguese, English again afterwards. */
const inPortuguese = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => setLanguage("pt-BR")),
    () => effect,
    () => Effect.sync(() => setLanguage("en"))
  )

describe("the onboarding and the progress line in Portuguese", () => {
  it.scopedLive("closing lines and step lines of an onboarding whose rows did not all end well", () =>
    inPortuguese(Effect.gen(function*() {
      const sandbox = yield* startTestSandbox()
      const dir = yield* tempDir
      const runDir = Path.join(dir, "run")
      const result = yield* onboardInto(sandbox, { input: writeFamily(dir), runDir })
      const { table, where } = closingLines(result.summary)
      const customers = Path.join(runDir, "customers")
      assert.match(table[0]!, /^onboard: \d+ linhas em \d+ de \d+ passos, /)
      assert.isTrue(table.some((l) => /^ +requisições +\d+/.test(l)), table.join("\n"))
      // Statuses stay English.
      assert.isTrue(table.some((l) => /^ +created +\d+/.test(l)), table.join("\n"))
      assert.include(where, "o que deu errado, do mais frequente ao menos:")
      assert.include(
        where,
        `próximo passo (customers): corrija as linhas inválidas numa cópia de ${customers}/report.csv (mantenha _row), depois`
      )
      assert.include(where, `      fsm-bulk rerun ${customers} --fixed CORRECTED.csv`)
      assert.include(where, `resumo: ${runDir}/summary.json`)
      assert.isTrue(where.some((l) => l.startsWith(`linhas a conferir: ${customers}/report.csv`)), where.join("\n"))
      assert.isTrue(where.some((l) => /^depois \(equipments\): as linhas puladas/.test(l)), where.join("\n"))
      assert.notInclude(where.join("\n"), "next (")
      const steps = result.summary.steps
      const line = stepLine(0, steps.length, steps.find((s) => s.resource === "customers")!, false)
      assert.match(line, /customers +\d+ linhas +created \d+/)
      const skipped = steps.find((s) => s.skippedForParent > 0)!
      assert.include(stepLine(0, steps.length, skipped, false), "(a linha pai não terminou bem)")
    })))

  it.scopedLive("the live progress line: rows, what the run waits for, requests per minute and time left", () =>
    inPortuguese(Effect.gen(function*() {
      const lines: Array<string> = []
      const progress = yield* makeProgress({
        label: "import customers",
        tty: false,
        plainEveryMs: 25,
        stats: Effect.succeed({ requests: 3, rateLimited: 0, retries: 0, logins: 1 }),
        activity: Effect.succeed({ state: "waiting-budget" as const, inWindow: 3 }),
        rate: { limit: 100, windowMs: 1_000 },
        write: (text) => void lines.push(text)
      })
      yield* progress.begin(10, 2)
      yield* progress.row
      yield* until(() => lines.length > 0)
      yield* progress.end
      assert.match(
        lines[0]!,
        /^import customers: 3\/10 linhas, 30%, aguardando o limite de requisições, 180 de 6000 req\/min, faltam ~\S+\n$/
      )
    })))
})
