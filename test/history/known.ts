/**
 * One small history per known open defect (`KNOWN_OPEN`), each of which breaks an invariant on today's main. The
 * bounded run skips a history while its feature is in `KNOWN_OPEN`; once the fix is merged and the line deleted,
 * it runs and must pass. `HISTORY_ALL=1` runs them all (they fail until fixed).
 */
import type { Action, Feature, FileShape } from "./model.js"

const row = (key: string | undefined, name: string, note = "", phone = "") => ({ key, name, note, phone })
const file = (rows: FileShape["rows"], delimiter: ";" | "," = ";"): FileShape => ({
  delimiter,
  encoding: "windows-1252",
  rows
})
const six = file([
  row("CLI-01", "Padaria Pão Quente", "Cliente desde 2019"),
  row("CLI-02", "Açougue São João", "Pagamento à vista"),
  row("CLI-03", "Farmácia Coração de Jesus", "Entregar após às 14h"),
  row("CLI-04", "Mercearia Irmãos Araújo", "Cliente desde 2019"),
  row("CLI-05", "Oficina do Zé", "Pagamento à vista"),
  row("CLI-06", "Lanchonete Calçadão", "Cliente desde 2019")
])
const noFault = { kind: "faults", failRate: 0, resetRate: 0, dropAfterWriteRate: 0, stormMs: 0, echoRate: 0 } as const

export const knownHistories: ReadonlyArray<
  { readonly feature: Feature; readonly seed: number; readonly history: ReadonlyArray<Action> }
> = [
  {
    // Issue 28.2: the run did not send `address`; the actor sets it; undo deletes the record anyway.
    feature: "unsent-fields-edited-then-undo",
    seed: 1,
    history: [
      { kind: "import", mode: "upsert", file: file([row("CLI-01", "Açougue São João")]), dryRun: false },
      { kind: "actor-edit", record: 0, field: "address", value: "Rua das Flores, 12" },
      { kind: "undo", run: 0, dryRun: false }
    ]
  },
  {
    // Issue 28.1: creates of existing records under 5xx: the lookup finds them, calls them created, undo deletes.
    feature: "faulted-create-then-undo",
    seed: 5,
    history: [
      { kind: "import", mode: "upsert", file: six, dryRun: false },
      { ...noFault, failRate: 0.5 },
      { kind: "import", mode: "create", file: six, dryRun: false },
      { kind: "undo", run: 1, dryRun: false }
    ]
  },
  {
    // Issue 28 (newcomer): a footer row without a key is created by an upsert.
    feature: "keyless-rows",
    seed: 1,
    history: [
      {
        kind: "import",
        mode: "upsert",
        file: file([row("CLI-01", "Padaria Pão Quente"), row(undefined, "Total de clientes: 1")]),
        dryRun: false
      }
    ]
  },
  {
    // Issue 28.5: a record deleted on the server after the export is created again by re-importing the export.
    feature: "stale-after-server-delete",
    seed: 1,
    history: [
      { kind: "import", mode: "upsert", file: six, dryRun: false },
      { kind: "export" },
      { kind: "actor-delete", record: 0 },
      { kind: "reimport", export: 0, edits: [] }
    ]
  },
  {
    // Issue 28.9: an export with pages in transit while records are deleted misses records that existed throughout.
    feature: "export-during-deletions",
    seed: 1,
    history: [
      { kind: "import", mode: "upsert", file: six, dryRun: false },
      { kind: "export-while-deleting", deletes: 2, pageSize: 2 }
    ]
  },
  {
    // Issue 28.3: a gateway's error quoting the Authorization header lands in report, journal and summary.
    feature: "echoed-secrets",
    seed: 5,
    history: [
      { ...noFault, echoRate: 0.9 },
      { kind: "import", mode: "upsert", file: file(six.rows.slice(0, 2)), dryRun: false }
    ]
  },
  {
    // New (this checker): after a stop with rows in flight, rows journalled created are reported skipped. The stop's
    // timing decides, so it fails in about half of the runs.
    feature: "soft-stop",
    seed: 1010,
    history: [
      {
        kind: "interrupted-import",
        mode: "create",
        file: file(six.rows.slice(0, 3), ","),
        after: 2,
        hard: false
      }
    ]
  }
]
