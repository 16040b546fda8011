/**
 * The user guides that ship with the package (`docs/*.md` and the README, listed in package.json's `files`), found
 * beside the code whether it runs from the repository or from an installed copy: both keep `docs/` one level above
 * `dist/` (and `src/`). A topic is a guide's file name without `.md` (`importing`), or `readme`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const packageRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..", "..")
const docsDir = Path.join(packageRoot, "docs")

interface Topic {
  readonly name: string
  readonly path: string
  /** The guide's first heading, without the `#`. */
  readonly title: string
}

const titleOf = (path: string): string => {
  const heading = readFileSync(path, "utf8").split("\n").find((l) => l.startsWith("# "))
  return heading === undefined ? "" : heading.slice(2).trim()
}

/** Every guide, the README first, then docs/ by name. */
export const topics = (): ReadonlyArray<Topic> => {
  const readme = Path.join(packageRoot, "README.md")
  const guides = existsSync(docsDir)
    ? readdirSync(docsDir).filter((f) => f.endsWith(".md")).sort().map((f) => Path.join(docsDir, f))
    : []
  return [...(existsSync(readme) ? [readme] : []), ...guides].map((path) => ({
    name: path === readme ? "readme" : Path.basename(path, ".md"),
    path,
    title: titleOf(path)
  }))
}

/** A topic by name, without regard to case, with or without `.md` or a leading `docs/`. */
export const findTopic = (name: string): Topic | undefined => {
  const wanted = name.toLowerCase().replace(/^docs\//, "").replace(/\.md$/, "")
  return topics().find((t) => t.name.toLowerCase() === wanted)
}
