// @ts-check
/**
 * Reading `strace -f -y -e trace=read,pread64` output: how many bytes reads of one file returned. Used by
 * passes.mjs and test/validate/passes-cli.test.ts.
 */

/**
 * `PID read(21</path/file>, ...) = 65536` and `pread64(...)`: bytes per path, summed over every thread. A call
 * that another thread's output cut in two comes as `PID pread64(21</path/file>, <unfinished ...>`, then
 * `PID <... pread64 resumed>...) = 65536`: the count is in the second line, the path in the first.
 * @param {string} trace strace's output
 * @param {string} path the file's real path
 * @returns {number}
 */
export const bytesReadFrom = (trace, path) => {
  let total = 0
  /** @type {Map<string, string>} */
  const unfinished = new Map()
  for (const line of trace.split("\n")) {
    const cut = /^(\d+)\s+(?:read|pread64)\(\d+<([^>]*)>.*<unfinished \.\.\.>/.exec(line)
    if (cut !== null) {
      unfinished.set(cut[1], cut[2])
      continue
    }
    const resumed = /^(\d+)\s+<\.\.\. (?:read|pread64) resumed>.*\)\s+=\s+(\d+)/.exec(line)
    if (resumed !== null) {
      if (unfinished.get(resumed[1]) === path) total += Number(resumed[2])
      unfinished.delete(resumed[1])
      continue
    }
    const m = /(?:read|pread64)\(\d+<([^>]*)>.*\)\s+=\s+(\d+)/.exec(line)
    if (m !== null && m[1] === path) total += Number(m[2])
  }
  return total
}
