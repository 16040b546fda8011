/**
 * Two builds measured side by side (startup-pair.mjs, fleet-startup-pair.mjs): each scenario run `runs` times per
 * build, the builds interleaved so the machine's load falls on both alike; prints each build's medians and every run.
 */

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
export const f = (x, d = 2) => x.toFixed(d)

/** `run(bin)` gives `{ wall, cpu, rss }` (s, s, MB) for one run of scenario `name` with build `bin`. */
export const pair = async (name, runs, bins, run, width = 18) => {
  const seen = [[], []]
  for (let i = 0; i < runs; i++) {
    for (const b of [0, 1]) seen[b].push(await run(bins[b]))
  }
  for (const b of [0, 1]) {
    const all = seen[b].map((r) => `${f(r.wall)}/${f(r.cpu)}/${f(r.rss, 0)}`).join("  ")
    const m = (k) => median(seen[b].map((r) => r[k]))
    console.log(
      `${name.padEnd(width)} ${b === 0 ? "A" : "B"}  median wall ${f(m("wall"))} s  CPU ${f(m("cpu"))} s  RSS ${
        f(m("rss"), 0)
      } MB   runs (wall/CPU/RSS): ${all}`
    )
  }
}
