/**
 * Mends how exceljs decodes the XML of a workbook it reads. Its `lib/utils/parse-sax.js` decodes every chunk of
 * an inflated sheet on its own, so a multi-byte UTF-8 character split across two chunks comes out as two U+FFFD
 * ("não" → "n��o"; exceljs issues #2063, #2316, #2084): data corruption that an import would send to the API.
 *
 * Importing this module puts, in Node's module cache, a parse-sax that decodes each stream with its own streaming
 * decoder. It must be imported before anything loads exceljs (exceljs binds parse-sax when it loads): every
 * module that imports exceljs imports this one first, and so does the edge.
 *
 * Still needed with exceljs 4.4.0: without it, the workbook of the test "keeps multi-byte UTF-8 characters whole
 * across the chunks a sheet is inflated in" (test/files/Xlsx.test.ts) reads back with broken characters. What
 * retires it: an exceljs whose parse-sax decodes a stream with one streaming decoder (`TextDecoder` with
 * `{stream: true}`, or a `StringDecoder`). Then that test passes with exceljs loaded without this module (make
 * `loadExcelJs` skip it and drop the test's own import of it), and this file and its imports (ExcelJs.ts,
 * bin.ts, the tests) go.
 */
import { createRequire, Module } from "node:module"
import { PassThrough } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import { errorMark, hiddenColumnsRef, hiddenRowRef } from "./XlsxCell.js"

const isTrue = (v: string | undefined) => v === "1" || v === "true"

const require = createRequire(import.meta.url)
const parseSaxPath = require.resolve("exceljs/lib/utils/parse-sax.js")
const { SaxesParser } = createRequire(parseSaxPath)("saxes") as {
  SaxesParser: new() => {
    on(event: string, f: (value: unknown) => void): void
    write(text: string): void
    close(): void
  }
}

interface SaxEvent {
  readonly eventType: "opentag" | "text" | "closetag"
  readonly value: unknown
}

/** Same contract as exceljs's: batches of sax events, one batch per chunk read. */
async function* parseSax(
  input: AsyncIterable<Buffer | string> | NodeJS.ReadableStream
): AsyncGenerator<Array<SaxEvent>> {
  // exceljs hands over some older streams that are not async-iterable.
  const iterable: AsyncIterable<Buffer | string> = Symbol.asyncIterator in input
    ? (input as AsyncIterable<Buffer | string>)
    : (input as NodeJS.ReadableStream).pipe(new PassThrough())
  const parser = new SaxesParser()
  const decoder = new StringDecoder("utf8")
  let error: unknown
  let events: Array<SaxEvent> = []
  parser.on("error", (e) => void (error = e))
  // Hidden rows and columns are handed on (`hiddenRowRef`). Three more mends of what exceljs makes of the events:
  // - an error cell (`<c t="e">`, typed or a formula's saved result) is handed over as text marked `errorMark`,
  //   so the reader names the error (exceljs reads a formula's `#N/A` as the number NaN);
  // - an inline string's rich text (`<is><r><t>Pa</t></r><r><t>daria</t></r></is>`) keeps every run (exceljs
  //   starts its value again at each `<t>`, keeping the last run only);
  // - phonetic runs (`<rPh>`) are not part of a string's text.
  let errorCell = false
  let hiddenColumns: Array<number> | undefined
  const marker = (ref: string, id: string) => {
    events.push({ eventType: "opentag", value: { name: "hyperlinks", attributes: {} } })
    events.push({ eventType: "opentag", value: { name: "hyperlink", attributes: { ref, "r:id": id } } })
    events.push({ eventType: "closetag", value: { name: "hyperlink" } })
    events.push({ eventType: "closetag", value: { name: "hyperlinks" } })
  }
  let inInline = false
  let inlineTexts = 0
  let phonetic = 0
  const attributesOf = (value: unknown) => (value as { attributes: Record<string, string> }).attributes
  parser.on("opentag", (value) => {
    const name = (value as { name: string }).name
    if (phonetic > 0 || name === "rPh") {
      phonetic += 1
      return
    }
    if (name === "row") {
      const attributes = attributesOf(value)
      if (isTrue(attributes.hidden) || (attributes.ht !== undefined && Number(attributes.ht) === 0)) {
        marker(hiddenRowRef, attributes.r ?? "")
      }
    } else if (name === "col") {
      const attributes = attributesOf(value)
      if (isTrue(attributes.hidden) || (attributes.width !== undefined && Number(attributes.width) === 0)) {
        const min = Number(attributes.min)
        const max = Math.min(Number(attributes.max), 16_384)
        for (let n = min; Number.isInteger(n) && n <= max; n++) (hiddenColumns ??= []).push(n)
      }
    } else if (name === "sheetData" && hiddenColumns !== undefined) {
      marker(hiddenColumnsRef, hiddenColumns.join(","))
      hiddenColumns = undefined
    } else if (name === "c") {
      const attributes = attributesOf(value)
      errorCell = attributes.t === "e"
      if (errorCell) attributes.t = "str"
    } else if (name === "is") {
      inInline = true
      inlineTexts = 0
    } else if (name === "t" && inInline && inlineTexts++ > 0) return
    events.push({ eventType: "opentag", value })
    if (name === "v" && errorCell) events.push({ eventType: "text", value: errorMark })
  })
  parser.on("text", (value) => {
    if (phonetic === 0) events.push({ eventType: "text", value })
  })
  parser.on("closetag", (value) => {
    if (phonetic > 0) {
      phonetic -= 1
      return
    }
    const name = (value as { name: string }).name
    if (name === "c") errorCell = false
    else if (name === "is") inInline = false
    events.push({ eventType: "closetag", value })
  })
  const feed = (text: string) => {
    if (text.length > 0) parser.write(text)
    if (error !== undefined) throw error
  }
  for await (const chunk of iterable) {
    feed(typeof chunk === "string" ? chunk : decoder.write(chunk))
    yield events
    events = []
  }
  feed(decoder.end())
  if (events.length > 0) yield events
}

/** Marks our parse-sax, so a module graph evaluated again in the same process (test runners) recognises it. */
const mended = Symbol.for("fsm-bulk/exceljs-parse-sax")
Object.defineProperty(parseSax, mended, { value: true })

const cached = require.cache[parseSaxPath]
if (cached === undefined) {
  const module = new Module(parseSaxPath)
  module.filename = parseSaxPath
  module.exports = parseSax
  module.loaded = true
  require.cache[parseSaxPath] = module
} else if (!(cached.exports as Record<symbol, unknown>)[mended]) {
  // Too late to mend: fail loudly rather than read workbooks that may be corrupted.
  throw new Error("exceljs was loaded before src/files/ExcelSax.ts: import ExcelSax.js first")
}
