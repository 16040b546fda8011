/**
 * "Did you mean …?": the one place that finds the known name closest to a mistyped one (command, flag, choice,
 * resource, sheet, column), by edit distance with adjacent swaps counted as one edit, ignoring case. Plain text
 * functions, below every folder, so that a reader of files or lists can suggest without the command line.
 */
/** Edits (insert, delete, replace, swap of two neighbours) that turn `a` into `b`, ignoring case. */
export const editDistance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  const rows: Array<Array<number>> = Array.from({ length: s.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= t.length; j++) rows[0]![j] = j
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = d
    }
  }
  return rows[s.length]![t.length]!
}

/**
 * The known name a mistyped `given` most likely meant: the closest one within a third of its length (at least one
 * edit, at most three), or one that differs only by case or punctuation; undefined when none is that close or two
 * are equally close.
 */
export const closest = (given: string, known: ReadonlyArray<string>): string | undefined => {
  const bare = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "")
  const same = known.filter((k) => bare(k) === bare(given) && bare(given) !== "")
  if (same.length === 1) return same[0]
  const limit = Math.max(1, Math.min(3, Math.floor(given.length / 3)))
  let best: string | undefined
  let bestDistance = limit + 1
  let tie = false
  for (const k of known) {
    const d = editDistance(given, k)
    if (d < bestDistance) {
      best = k
      bestDistance = d
      tie = false
    } else if (d === bestDistance) tie = true
  }
  return best === undefined || tie ? undefined : best
}

/** ` (did you mean "customers"?)` for the closest known name, else nothing; `show` writes the name. */
export const didYouMean = (
  given: string,
  known: ReadonlyArray<string>,
  show: (name: string) => string = (name) => `"${name}"`
): string => {
  const best = closest(given, known)
  return best === undefined ? "" : ` (did you mean ${show(best)}?)`
}
