/**
 * The terminal rules of everything the CLI prints: colour only on a terminal and never with `NO_COLOR` (any
 * non-empty value) or `TERM=dumb`; text wrapped to the terminal's width (`COLUMNS` when set, else the terminal's
 * columns, else 80).
 */

interface Stream {
  readonly isTTY?: boolean | undefined
  readonly columns?: number | undefined
}

/** Whether escape sequences may be written to `stream`. */
export const colourOn = (stream: Stream, env: NodeJS.ProcessEnv = process.env): boolean =>
  stream.isTTY === true && (env["NO_COLOR"] ?? "") === "" && env["TERM"] !== "dumb"

/** The width to wrap text written to `stream` at. */
export const widthOf = (stream: Stream, env: NodeJS.ProcessEnv = process.env): number => {
  const columns = Number(env["COLUMNS"])
  if (Number.isInteger(columns) && columns >= 20) return columns
  if (stream.isTTY === true && stream.columns !== undefined && stream.columns >= 20) return stream.columns
  return 80
}

const escapes = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g

/** `text` without escape sequences (colours, cursor moves). */
export const plain = (text: string): string => text.replace(escapes, "")

/** Our own colours (SGR sequences); any other control character in printed text came from outside. */
const sgr = /\x1b\[[0-9;]*m/y

const control = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/

/**
 * `text` as it may reach a terminal: a control character that is not a tab, a line break or (when `colour`) one of
 * our colour sequences is shown as `\xNN`, so a server's or a file's text cannot move the cursor, retitle the
 * window or hide what precedes it.
 */
export const printable = (text: string, colour: boolean): string => {
  if (!control.test(text)) return text
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (!control.test(c)) {
      out += c
      continue
    }
    if (colour && c === "\x1b") {
      sgr.lastIndex = i
      const m = sgr.exec(text)
      if (m !== null) {
        out += m[0]
        i += m[0].length - 1
        continue
      }
    }
    out += `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`
  }
  return out
}

/** `text` in bold when colour is on. */
export const bold = (on: boolean, text: string): string => (on ? `\x1b[1m${text}\x1b[0m` : text)

/**
 * `text` broken into lines of at most `width` characters, at spaces; the first line starts after `first`
 * characters already written, the others are indented by `indent`. A word longer than a line is cut.
 */
export const wrap = (text: string, width: number, indent = 0, first = indent): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  let room = Math.max(10, width - first)
  const push = () => {
    lines.push(line)
    line = ""
    room = Math.max(10, width - indent)
  }
  for (let word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > room) push()
    while (line === "" && word.length > room) {
      line = word.slice(0, room)
      word = word.slice(room)
      push()
    }
    if (word !== "") line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "" || lines.length === 0) lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : `${" ".repeat(indent)}${l}`))
}
