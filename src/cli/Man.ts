/**
 * The manual page (`man fsm-bulk`), drawn from the same model as `--help`: the root page, then every command's page,
 * as preformatted roff, so the man page never says anything the help does not. Written at build time to
 * `dist/fsm-bulk.1` (package.json `man`), printed by `fsm-bulk docs --man`.
 */
import { commandHelp, rootHelp } from "./Help.js"
import type { CliModel } from "./Model.js"

const page = { width: 78, colour: false }

/** Text safe inside roff's no-fill mode: backslashes escaped, a leading `.` or `'` not read as a request. */
const roffLines = (text: string): string =>
  text.replace(/\n+$/, "").split("\n").map((l) => {
    const escaped = l.replace(/\\/g, "\\e")
    return /^[.']/.test(escaped) ? `\\&${escaped}` : escaped
  }).join("\n")

/** A help page cut at its headings (an all-capitals line at the margin) into man sections. */
const sections = (text: string, heading: (title: string) => string): string => {
  const out: Array<string> = []
  let body: Array<string> = []
  const flush = () => {
    if (body.length > 0) out.push(".nf", roffLines(body.join("\n")), ".fi")
    body = []
  }
  for (const line of text.split("\n")) {
    if (/^[A-Z][A-Z ]+$/.test(line)) {
      flush()
      out.push(heading(line))
    } else body.push(line)
  }
  flush()
  return out.join("\n")
}

export const manPage = (model: CliModel, version: string): string => {
  const commands = model.commands.map((c) =>
    [
      `.SS "${model.name} ${c.name}"`,
      sections(commandHelp(model, c, page), (title) => `.PP\n.B ${title}`)
    ].join("\n")
  )
  return [
    `.TH FSM-BULK 1 "" "${model.name} ${version}" "User Commands"`,
    ".SH NAME",
    `${model.name} \\- ${roffLines(model.description)}`,
    // The root page without its first paragraph, which NAME already says.
    sections(rootHelp(model, page).replace(/^[^]*?\n\n/, ""), (title) => `.SH ${title}`),
    ".SH COMMANDS IN DETAIL",
    ...commands,
    ".SH SEE ALSO",
    `The guides: \\fB${model.name} docs\\fR lists them, \\fB${model.name} docs TOPIC\\fR prints one.`,
    ""
  ].join("\n")
}
