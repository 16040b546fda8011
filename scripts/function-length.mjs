// No function over 100 lines of its own (issue 26): a function's own lines are its lines less those of the
// functions it defines (arrow functions, function expressions and declarations, methods, accessors), whose first
// line stays counted as the line that defines them. `node scripts/function-length.mjs [--max N] DIR|FILE...`
// prints every longer function (file:line name: N lines) and exits 1 when there is one; `npm run lint:layers`
// runs it on the folders that keep the rule.
import * as fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

/** A readable name: the function's own, or what it is assigned to, or the call it is handed to. */
const nameOf = (node) => {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text
  let at = node.parent
  while (at && !ts.isSourceFile(at)) {
    if (ts.isVariableDeclaration(at) || ts.isPropertyAssignment(at) || ts.isPropertyDeclaration(at)) {
      return at.name.getText()
    }
    if (ts.isCallExpression(at) && at.arguments.length > 0 && ts.isStringLiteral(at.arguments[0])) {
      return at.arguments[0].text
    }
    if (isFunction(at)) break
    at = at.parent
  }
  return "(anonymous)"
}

/** Every function of one source text whose own lines exceed `max`. */
export const longFunctions = (file, text, max = 100) => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line
  const found = []
  const visit = (node, inside) => {
    if (isFunction(node)) {
      const first = lineOf(node.getStart(source))
      const last = lineOf(node.getEnd())
      const own = { node, first, lines: last - first + 1 }
      if (inside) inside.lines -= last - first
      ts.forEachChild(node, (child) => visit(child, own))
      if (own.lines > max) {
        found.push({ file, line: first + 1, name: nameOf(node), lines: own.lines })
      }
      return
    }
    ts.forEachChild(node, (child) => visit(child, inside))
  }
  visit(source, undefined)
  return found.sort((a, b) => a.line - b.line)
}

const sources = (path) =>
  fs.statSync(path).isDirectory()
    ? fs.readdirSync(path).sort().flatMap((entry) => sources(Path.join(path, entry)))
    : /\.ts$/.test(path) && !/\.d\.ts$/.test(path)
    ? [path]
    : []

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const at = args.indexOf("--max")
  const max = at >= 0 ? Number(args.splice(at, 2)[1]) : 100
  const found = args.flatMap(sources).flatMap((file) => longFunctions(file, fs.readFileSync(file, "utf8"), max))
  for (const f of found) console.log(`${f.file}:${f.line} ${f.name}: ${f.lines} lines of its own (at most ${max})`)
  if (found.length > 0) process.exit(1)
  console.log(`function length: no function over ${max} lines of its own in ${args.join(", ")}`)
}
