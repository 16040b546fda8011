/**
 * Imported by the edge (bin.ts) before the modules it loads: every command collects its heap sooner
 * (`collectSooner`, src/files/Heap.ts) from its very first full collection on.
 *
 * V8 sets the old generation's next limit at each full collection, at up to four times what it found alive, and
 * the commands stream rows through a live heap of some 30–60 MB: left alone, the heap of an `import --dry-run`
 * grew to about 200 MB before each collection, and its peak RSS (308 MiB for 20,000 rows, 437 MiB for 200,000)
 * followed the largest live figure any of its collections happened to find. Set when a command starts, the
 * flag came too late: the collections of loading (before 1 s) had already set a limit of some 130 MB, which
 * held until the heap reached it. A dry run now peaks at 163–209 MiB from 2,000 rows to 200,000 (docs/benchmarks.md).
 */
import * as Effect from "effect/Effect"
import { collectSooner } from "./files/Heap.js"

Effect.runSync(collectSooner)
