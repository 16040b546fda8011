/**
 * The positions of a stack trace in src/, for the unexpected failures the edge prints (bin.ts). The shipped CLI is
 * one bundle (scripts/bundle.mjs), so a frame says `dist/bin.js:24414:19`; Node maps frames itself only under
 * `--enable-source-maps`, which costs every start about 0.13 s of CPU and 20 MB (docs/benchmarks.md), and cannot
 * be turned on once the bundle has loaded. Here the frames of a file that has a source map beside it
 * (`FILE.map`, as esbuild and tsc write them) are mapped when a failure is printed, and only then.
 */
import { readFileSync } from "node:fs"
import { SourceMap } from "node:module"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

/** A frame's file, line and column: `file:///…/dist/bin.js:24414:19` or `/…/dist/bin.js:24414:19`. */
const framePosition = /((?:file:\/\/)?\/[^\s():]+\.js):(\d+):(\d+)/g

const mapOf = (file: string, maps: Map<string, SourceMap | undefined>): SourceMap | undefined => {
  if (!maps.has(file)) {
    let map: SourceMap | undefined
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")))
    } catch {
      map = undefined // no map beside it, or not one Node reads: the frame stays as it is
    }
    maps.set(file, map)
  }
  return maps.get(file)
}

/** The text with every frame that has a source map given as its source's file, line and column. */
export const inSourcePositions = (text: string): string => {
  const maps = new Map<string, SourceMap | undefined>()
  return text.replace(framePosition, (whole, location: string, line: string, column: string) => {
    const file = location.startsWith("file:") ? fileURLToPath(location) : location
    const entry = mapOf(file, maps)?.findEntry(Number(line) - 1, Number(column) - 1)
    if (entry === undefined || !("originalSource" in entry)) return whole
    const source = entry.originalSource.startsWith("file:")
      ? fileURLToPath(entry.originalSource)
      : Path.resolve(Path.dirname(file), entry.originalSource)
    const shown = location.startsWith("file:") ? pathToFileURL(source).href : source
    return `${shown}:${entry.originalLine + 1}:${entry.originalColumn + 1}`
  })
}
