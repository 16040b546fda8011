/**
 * What an onboarding reads: a workbook (one sheet per resource) or a directory (one `<resource>.csv` or
 * `<resource>.xlsx` per resource), turned into one input per resource. Sheets and files named `README` or starting
 * with `_` are the user's notes and are left alone; those named after a read-only list (an export's
 * `deleted-tasks.csv`, `team-users.csv` …: the API cannot write them) are skipped and named, so an export's folder
 * onboards as it is; any other name that is not an importable resource is refused, naming it and listing the names
 * that are.
 */
import * as Effect from "effect/Effect"
import { readdir, stat } from "node:fs/promises"
import * as Path from "node:path"
import { InputError } from "../Errors.js"
import { inspectWorkbook, NotAWorkbook, NotAZip } from "../files/Workbook.js"
import { isResourceName, resource, type ResourceName, resourceNames } from "../Resources.js"
import { didYouMean } from "../Words.js"

export interface StepInput {
  readonly resource: ResourceName
  /** Absolute path of the file that holds the rows. */
  readonly file: string
  /** The sheet to read, for a workbook. */
  readonly sheet?: string | undefined
  /** How messages name it: `customers.csv`, or `sheet "customers"`. */
  readonly label: string
}

export interface OnboardInput {
  readonly kind: "workbook" | "directory"
  /** Absolute path of the workbook or directory. */
  readonly path: string
  /** Attachment paths in the rows are relative to this directory (the workbook's, or the directory itself). */
  readonly baseDir: string
  /** One per resource, in the order found (not yet the dependency order). */
  readonly steps: ReadonlyArray<StepInput>
  /** Sheets or files left alone (notes), as named. */
  readonly ignored: ReadonlyArray<string>
  /** Sheets or files of read-only lists (an export's), skipped: the API cannot write them. */
  readonly readOnly: ReadonlyArray<ResourceName>
}

/** In the contract's order. */
const importableNames = resourceNames.filter((n) => resource(n).kind !== "readonly")

const namesList = () => importableNames.join(", ")

/** A sheet or file of notes, never data: `README`, `README.md`, `_lookups` … */
const isNote = (name: string) => /^readme$/i.test(name.trim()) || name.trim().startsWith("_")

/**
 * Sheets or files a mapping profile names (its `sheet`), by their name lowercased: the customer's own `Clientes`
 * sheet or `clientes.csv` holds the profile's resource.
 */
export type NamedByProfiles = ReadonlyMap<string, ResourceName>

/** The resource a sheet or file name stands for, compared without case or surrounding spaces. */
const resourceNamed = (name: string, named: NamedByProfiles): ResourceName | undefined => {
  const lower = name.trim().toLowerCase()
  const byProfile = named.get(lower)
  if (byProfile !== undefined) return byProfile
  return isResourceName(lower) && resource(lower).kind !== "readonly" ? lower : undefined
}

/** The read-only list a sheet or file name stands for (`deleted-tasks`), compared as `resourceNamed` does. */
const readOnlyNamed = (name: string): ResourceName | undefined => {
  const lower = name.trim().toLowerCase()
  return isResourceName(lower) && resource(lower).kind === "readonly" ? lower : undefined
}

const unknownNames = (kind: "sheet" | "file", names: ReadonlyArray<string>) => {
  const quoted = names.map((n) => `"${n}"${didYouMean(n.replace(/\.(csv|xlsx)$/i, ""), importableNames)}`).join(", ")
  const why = `${names.length > 1 ? "are not resource names" : "is not a resource name"}`
  return (
    `${kind} ${quoted} ${why}: each ${kind} is named after the resource it holds: ${namesList()}` +
    `; name a ${kind} of notes README or start its name with _`
  )
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const fromWorkbook = Effect.fn("Onboard.fromWorkbook")(function*(path: string, named: NamedByProfiles) {
  const book = yield* Effect.tryPromise({
    try: () => inspectWorkbook(path),
    catch: (cause) =>
      new InputError({
        file: path,
        detail: cause instanceof NotAZip || cause instanceof NotAWorkbook
          ? `not an .xlsx workbook (${cause.message}): onboarding reads a workbook with one sheet per resource, or a directory of <resource>.csv files`
          : `cannot be read: ${describe(cause)}`,
        cause
      })
  })
  const steps: Array<StepInput> = []
  const ignored: Array<string> = []
  const readOnly: Array<ResourceName> = []
  const unknown: Array<string> = []
  for (const sheet of book.sheets) {
    if (isNote(sheet.name)) {
      ignored.push(sheet.name)
      continue
    }
    const name = resourceNamed(sheet.name, named)
    const list = name === undefined ? readOnlyNamed(sheet.name) : undefined
    if (list !== undefined) {
      readOnly.push(list)
      continue
    }
    if (name === undefined) {
      unknown.push(sheet.name)
      continue
    }
    const twin = steps.find((s) => s.resource === name)
    if (twin !== undefined) {
      return yield* new InputError({
        file: path,
        detail: `sheets "${twin.sheet}" and "${sheet.name}" both hold ${name}: keep one of them`
      })
    }
    steps.push({ resource: name, file: path, sheet: sheet.name, label: `sheet "${sheet.name}"` })
  }
  if (unknown.length > 0) return yield* new InputError({ file: path, detail: unknownNames("sheet", unknown) })
  return {
    kind: "workbook",
    path,
    baseDir: Path.dirname(path),
    steps,
    ignored,
    readOnly
  } satisfies OnboardInput as OnboardInput
})

const fromDirectory = Effect.fn("Onboard.fromDirectory")(function*(path: string, named: NamedByProfiles) {
  const entries = yield* Effect.tryPromise({
    try: () => readdir(path, { withFileTypes: true }),
    catch: (cause) => new InputError({ file: path, detail: `cannot be read: ${describe(cause)}`, cause })
  })
  const steps: Array<StepInput> = []
  const ignored: Array<string> = []
  const readOnly: Array<ResourceName> = []
  const unknown: Array<string> = []
  for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isFile()) continue
    const extension = Path.extname(entry.name).toLowerCase()
    // Only tables can be data; attachments, notes and Excel's lock files (`~$customers.xlsx`) are not.
    if (extension !== ".csv" && extension !== ".xlsx") continue
    const base = entry.name.slice(0, -extension.length)
    if (isNote(base) || entry.name.startsWith("~$") || entry.name.startsWith(".")) {
      ignored.push(entry.name)
      continue
    }
    const name = resourceNamed(entry.name, named) ?? resourceNamed(base, named)
    const list = name === undefined ? readOnlyNamed(base) : undefined
    if (list !== undefined) {
      readOnly.push(list)
      continue
    }
    if (name === undefined) {
      unknown.push(entry.name)
      continue
    }
    const twin = steps.find((s) => s.resource === name)
    if (twin !== undefined) {
      return yield* new InputError({
        file: path,
        detail: `${twin.label} and ${entry.name} both hold ${name}: keep one of them`
      })
    }
    steps.push({ resource: name, file: Path.join(path, entry.name), label: entry.name })
  }
  if (unknown.length > 0) return yield* new InputError({ file: path, detail: unknownNames("file", unknown) })
  return { kind: "directory", path, baseDir: path, steps, ignored, readOnly } satisfies OnboardInput as OnboardInput
})

/**
 * The inputs of an onboarding at `path` (a workbook or a directory); fails when nothing there can be onboarded.
 * `named`: the sheets or files mapping profiles name, besides those named after a resource.
 */
export const readOnboardInput = Effect.fn("Onboard.readInput")(function*(
  path: string,
  named: NamedByProfiles = new Map()
) {
  const absolute = Path.resolve(path)
  const info = yield* Effect.tryPromise({
    try: () => stat(absolute),
    catch: (cause) =>
      new InputError({
        file: path,
        detail: (cause as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : `cannot be read: ${describe(cause)}`,
        cause
      })
  })
  const input = info.isDirectory() ? yield* fromDirectory(absolute, named) : yield* fromWorkbook(absolute, named)
  if (input.steps.length === 0) {
    return yield* new InputError({
      file: path,
      detail: `no ${
        input.kind === "workbook" ? "sheet" : "file"
      } is named after a resource: name each one after the resource it holds (${namesList()})`
    })
  }
  return input
})
