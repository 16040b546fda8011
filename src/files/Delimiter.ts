/**
 * Which of `,` `;` and tab separates a CSV file's cells, decided from its first lines, counting only outside
 * quotes (a quoted `"12,5"` is not a separator). The header decides when it holds exactly one candidate; when it
 * holds several, the one whose count stays the same on most of the following lines wins; anything else is ambiguous
 * and the user is asked for `--delimiter` rather than guessed for.
 */
import * as Either from "effect/Either"

export type Delimiter = "," | ";" | "\t"

const candidates: ReadonlyArray<Delimiter> = [",", ";", "\t"]

const delimiterName = (d: Delimiter): string => (d === "\t" ? "tab" : `"${d}"`)

/** Per logical record (a quoted cell may span lines): how often each candidate occurs outside quotes. */
const countRecords = (sample: string, complete: boolean, limit: number): Array<Record<Delimiter, number>> => {
  const records: Array<Record<Delimiter, number>> = []
  let counts: Record<Delimiter, number> = { ",": 0, ";": 0, "\t": 0 }
  let quoted = false
  let blank = true
  const finish = () => {
    if (!blank) records.push(counts)
    counts = { ",": 0, ";": 0, "\t": 0 }
    blank = true
  }
  for (let i = 0; i < sample.length && records.length < limit; i++) {
    const c = sample[i]!
    if (c === "\"") {
      quoted = !quoted
      blank = false
    } else if (quoted) continue
    else if (c === "\n" || c === "\r") finish()
    else if (c === "," || c === ";" || c === "\t") {
      counts[c]++
      blank = false
    } else if (c !== " ") blank = false
  }
  // The last record of a sample cut mid-file may be partial: only a complete file's last line counts.
  if (complete && !quoted) finish()
  return records
}

/**
 * The delimiter of a CSV whose beginning is `sample` (`complete`: the sample is the whole file), or the reason
 * it cannot be told.
 */
export const sniffDelimiter = (sample: string, complete: boolean): Either.Either<Delimiter, string> => {
  const records = countRecords(sample, complete, 50)
  const [header, ...data] = records
  if (header === undefined) return Either.right(",")
  const inHeader = candidates.filter((d) => header[d] > 0)
  if (inHeader.length === 1) return Either.right(inHeader[0]!)
  if (inHeader.length === 0) {
    const inData = candidates.filter((d) => data.some((r) => r[d] > 0))
    if (inData.length === 0) return Either.right(",")
    return Either.left(
      `cannot tell the delimiter: the header has a single column but later lines contain ${
        inData.map(delimiterName).join(" and ")
      }; give --delimiter`
    )
  }
  // Ragged rows are row-level problems: the candidate that keeps the header's count on the most lines wins.
  const steadiness = inHeader.map((d) => ({ d, lines: data.filter((r) => r[d] === header[d]).length }))
  const best = Math.max(...steadiness.map((s) => s.lines))
  const winners = steadiness.filter((s) => s.lines === best)
  if (best > 0 && winners.length === 1) return Either.right(winners[0]!.d)
  return Either.left(
    `cannot tell the delimiter: the header contains ${inHeader.map(delimiterName).join(" and ")}; give --delimiter`
  )
}
