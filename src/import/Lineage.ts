/**
 * A run's reruns. A rerun writes its own run directory, wherever `--out` puts it; the run it took its rows from
 * learns of it through `reruns.ndjson` in its own directory: one line `{"runDir": …, "at": …}` per rerun, appended
 * when the rerun's directory is created, before anything is sent. So the whole family of a run can be found from
 * any member: the original import up the journals' `parent`, every rerun (and rerun of a rerun) down these files.
 *
 * `rerun` checks corrected rows against the whole original file as every earlier rerun left it (a key an earlier
 * rerun of the same run used is taken), and `undo` of a run takes back its reruns' writes too.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as Path from "node:path"
import { type Header, journalFile, readJournal } from "./Journal.js"

const rerunsFile = "reruns.ndjson"

const Entry = Schema.parseJson(Schema.Struct({ runDir: Schema.String }))
const decodeEntry = Schema.decodeUnknownOption(Entry)

/**
 * Records `child` as a rerun of `parent`. A line of a few hundred bytes appended with O_APPEND lands whole; a
 * parent that cannot be written to (read-only media) only loses the link, which the returned message says.
 */
export const recordRerun = (parent: string, child: string): Effect.Effect<string | undefined> =>
  Effect.promise(() =>
    fs.promises.appendFile(
      Path.join(parent, rerunsFile),
      `${JSON.stringify({ runDir: Path.resolve(child), at: new Date().toISOString() })}\n`,
      { encoding: "utf8", flag: "a" }
    ).then(
      () => undefined,
      (e: unknown) =>
        `cannot record this rerun in ${Path.join(parent, rerunsFile)} (${
          e instanceof Error ? e.message : String(e)
        }): an undo of ${parent} will not cover it, and a later rerun of it will not see its rows`
    )
  )

/** The run directories recorded as reruns of `dir` (existing ones with a journal), in the order recorded. */
const childrenOf = (dir: string): ReadonlyArray<string> => {
  const file = Path.join(dir, rerunsFile)
  if (!fs.existsSync(file)) return []
  const out: Array<string> = []
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const entry = decodeEntry(line)
    if (entry._tag === "None") continue
    const child = Path.resolve(entry.value.runDir)
    if (!out.includes(child) && fs.existsSync(Path.join(child, journalFile))) out.push(child)
  }
  return out
}

export interface Rerun {
  readonly runDir: string
  readonly header: Header
}

/**
 * Every rerun below `dir` (reruns of its reruns too), oldest first by start time; dry runs included (the caller
 * decides), `dir` itself not. Unreadable journals are left out: they wrote nothing anyone can read back.
 */
export const rerunsOf = Effect.fn("Lineage.rerunsOf")(function*(dir: string) {
  const seen = new Set<string>([Path.resolve(dir)])
  const found: Array<Rerun> = []
  const queue = [...childrenOf(Path.resolve(dir))]
  while (queue.length > 0) {
    const child = queue.shift()!
    if (seen.has(child)) continue
    seen.add(child)
    const journal = yield* Effect.either(readJournal(Path.join(child, journalFile)))
    if (journal._tag === "Left") continue
    found.push({ runDir: child, header: journal.right.header })
    queue.push(...childrenOf(child))
  }
  return found.sort((a, b) => a.header.started.localeCompare(b.header.started))
})
