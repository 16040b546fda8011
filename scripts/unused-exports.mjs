// No export that only its own file uses (issue 26, item 5): an export is a promise to other modules, and one that
// none takes up hides dead code and widens what a change must keep. `node scripts/unused-exports.mjs [--root DIR]`
// lists every declaration exported by a file of DIR/src (default: the repository) whose name appears in no other
// file of DIR's src/, test/ and scripts/ (as a word: an import, a namespace's member `X.name`, a bench's import from
// dist/), as file:line name, and exits 1 when there is one; `npm run lint:layers` runs it. The word test errs towards
// "used" (a name also written in another file's comment counts), never the other way.
import * as fs from "node:fs"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import ts from "typescript"

const { values } = parseArgs({ options: { root: { type: "string", default: "." } } })
const root = Path.resolve(values.root)
const sourceExtensions = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/

const filesUnder = (dir) => {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && sourceExtensions.test(e.name))
    .map((e) => Path.join(e.parentPath, e.name))
    .filter((f) => !f.split(Path.sep).includes("node_modules"))
}

const srcFiles = filesUnder(Path.join(root, "src")).filter((f) => /\.tsx?$/.test(f))
const allFiles = ["src", "test", "scripts"].flatMap((d) => filesUnder(Path.join(root, d)))

/** For each word, the files it is written in. */
const filesOfWord = new Map()
const texts = new Map()
for (const file of allFiles) {
  const text = fs.readFileSync(file, "utf8")
  texts.set(file, text)
  for (const word of new Set(text.match(/[A-Za-z_$][\w$]*/g) ?? [])) {
    const files = filesOfWord.get(word)
    if (files === undefined) filesOfWord.set(word, new Set([file]))
    else files.add(file)
  }
}

const isExported = (node) =>
  (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export) !== 0 &&
  (ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Default) === 0

/** The names a file exports by declaration or by `export { … }`, with their lines. */
const exportsOf = (file) => {
  const source = ts.createSourceFile(file, texts.get(file), ts.ScriptTarget.Latest, true)
  const found = []
  const add = (name, node) => found.push({ name, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 })
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement) && isExported(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) add(d.name.text, d)
    } else if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement) || ts.isModuleDeclaration(statement)) &&
      statement.name !== undefined && ts.isIdentifier(statement.name) && isExported(statement)
    ) {
      add(statement.name.text, statement)
    } else if (
      ts.isExportDeclaration(statement) && statement.moduleSpecifier === undefined && statement.exportClause &&
      ts.isNamedExports(statement.exportClause)
    ) {
      for (const e of statement.exportClause.elements) add(e.name.text, e)
    }
  }
  // A declaration merged with a namespace or overloads is one export.
  return found.filter((e, i) => found.findIndex((f) => f.name === e.name) === i)
}

const unused = srcFiles.flatMap((file) =>
  exportsOf(file)
    .filter(({ name }) => [...(filesOfWord.get(name) ?? [])].every((f) => f === file))
    .map(({ name, line }) =>
      `${Path.relative(process.cwd(), file)}:${line} ${name}: exported, used only in its own file`
    )
)

if (unused.length === 0) {
  console.log(`unused exports: none in ${srcFiles.length} files of src/`)
} else {
  console.log(unused.join("\n"))
  process.exitCode = 1
}
