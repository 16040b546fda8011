/** The longest functions of the files given, by lines of their own (not counting the functions they define): `node scripts/function-lines.mjs src/fleet/*.ts` (exit 1 when one is over LIMIT, default 100). */
import { readFileSync } from "node:fs"
import ts from "typescript"
const limit = Number(process.env.LIMIT ?? 100)
let worst = []
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8")
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const lines = (n) =>
    sf.getLineAndCharacterOfPosition(n.getEnd()).line - sf.getLineAndCharacterOfPosition(n.getStart()).line + 1
  const isFn = (n) =>
    ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n)
  const nested = (n) => {
    let sum = 0
    n.forEachChild(function visit(c) {
      if (isFn(c)) sum += lines(c)
      else c.forEachChild(visit)
    })
    return sum
  }
  const name = (n) => {
    let p = n.parent
    while (p && !ts.isVariableDeclaration(p) && !ts.isPropertyAssignment(p) && !ts.isFunctionDeclaration(p)) {
      p = p.parent
    }
    return p?.name?.getText() ?? (n.name?.getText() ?? "?")
  }
  sf.forEachChild(function visit(n) {
    if (isFn(n)) {
      worst.push({
        file,
        name: name(n),
        line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1,
        own: lines(n) - nested(n),
        total: lines(n)
      })
    }
    n.forEachChild(visit)
  })
}
worst.sort((a, b) => b.own - a.own)
for (const w of worst.slice(0, Number(process.env.TOP ?? 12))) {
  console.log(`${w.own}\t${w.total}\t${w.file}:${w.line} ${w.name}`)
}
const over = worst.filter((w) => w.own > limit)
console.log(over.length === 0 ? `no function over ${limit} own lines` : `${over.length} over ${limit}`)
process.exit(over.length === 0 ? 0 : 1)
