/** The tool's version, from package.json (read once; the file sits one level above both src/ and dist/). */
import { createRequire } from "node:module"

export const version: string =
  (createRequire(import.meta.url)("../package.json") as { readonly version: string }).version
