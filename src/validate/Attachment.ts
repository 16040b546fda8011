/**
 * The one rule for local files named in `file` cells: a file is attached only when its real path (every link
 * followed) lies inside the attachments folder (the input file's folder, or `--attachments-root DIR`), is a
 * regular file, is not on a kernel pseudo filesystem (procfs, sysfs …) and is within the size limit. A
 * spreadsheet received from someone else must never be able to send the process environment, `/etc/shadow` or a
 * key from the home folder.
 *
 * `checkAttachment` applies the rule at validation (so `validate` and `--dry-run` refuse too); `readAttachment`
 * applies it again when the bytes are read for sending, on the file actually opened: the path may have been
 * swapped for a link or a pipe in between.
 */
import { constants } from "node:fs"
import { type FileHandle, open, realpath, stat, statfs } from "node:fs/promises"
import * as Path from "node:path"
import { t } from "../Messages.js"
import { quote } from "./Invalid.js"

interface AttachmentRules {
  /** Relative cells are resolved from this folder (the input file's). */
  readonly baseDir: string
  /** Every attachment must lie inside this folder (default: `baseDir`). */
  readonly root?: string | undefined
  readonly maxBytes: number
}

interface CheckedAttachment {
  /** The real path: no link left in it. Read with `readAttachment`. */
  readonly path: string
  /** The name the cell gave the file (a link inside the folder keeps its own name). */
  readonly name: string
  readonly bytes: number
}

/** Kernel filesystems whose files are views of the machine, not documents (statfs `f_type`). */
const pseudoFilesystems: ReadonlyMap<number, string> = new Map([
  [0x9fa0, "procfs"],
  [0x62656572, "sysfs"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x62656570, "configfs"],
  [0xde5e81e4, "efivarfs"],
  [0x1cd1, "devpts"]
])

/** Folders of pseudo files on Linux, refused by name too (the filesystem check needs the file to exist). */
const systemFolders = ["/proc", "/sys", "/dev"]

const size = (bytes: number): string => {
  const short = (n: number) => n.toFixed(1).replace(/\.0$/, "")
  return bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
    ? `${short(bytes / 1024)} KiB`
    : `${short(bytes / (1024 * 1024))} MiB`
}

const inside = (folder: string, path: string): boolean => {
  if (path === folder) return true
  const prefix = folder.endsWith(Path.sep) ? folder : folder + Path.sep
  return path.startsWith(prefix)
}

const systemFolderOf = (path: string): string | undefined => systemFolders.find((f) => inside(f, path))

/** What kind of thing a non-regular file is, for the message. */
const kindOf = (
  info: {
    isDirectory(): boolean
    isFIFO(): boolean
    isSocket(): boolean
    isCharacterDevice(): boolean
    isBlockDevice(): boolean
  }
) =>
  t(
    info.isDirectory()
      ? "attachment.aFolder"
      : info.isFIFO()
      ? "attachment.aPipe"
      : info.isSocket()
      ? "attachment.aSocket"
      : info.isCharacterDevice() || info.isBlockDevice()
      ? "attachment.aDevice"
      : "attachment.somethingElse"
  )

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code

/** A cell as a path of this system: a workbook written on Windows names files with backslashes (`..\docs\a.pdf`). */
const asLocalPath = (text: string): string => (Path.sep === "/" ? text.replaceAll("\\", "/") : text)

/** `C:\…`, `C:/…` or `\\server\share`: absolute on Windows, whatever this system makes of them. */
const windowsAbsolute = (text: string): boolean => /^[A-Za-z]:[\\/]/.test(text) || /^[\\/]{2}/.test(text)

const outsideMessage = (text: string, root: string) => t("attachment.outside", { file: quote(text), root })

/** Refusal of a real path that is a pseudo file or not a regular file; undefined when it may be read. */
const refusal = async (
  text: string,
  real: string,
  info: Awaited<ReturnType<typeof stat>>
): Promise<string | undefined> => {
  const system = systemFolderOf(real)
  if (system !== undefined) {
    return t("attachment.system", { file: quote(text), real, folder: system })
  }
  if (!info.isFile()) return t("attachment.notFile", { file: quote(text), kind: kindOf(info) })
  const fs = await statfs(real).then((s) => pseudoFilesystems.get(Number(s.type)), () => undefined)
  if (fs !== undefined) return t("attachment.pseudo", { file: quote(text), real, fs })
  return undefined
}

/**
 * Checks one attachment cell against the rule and the disk. Returns the file to attach, or why not (a message
 * naming the cell's text; the caller names the row and column).
 */
export const checkAttachment = async (text: string, rules: AttachmentRules): Promise<CheckedAttachment | string> => {
  const rootGiven = Path.resolve(rules.root ?? rules.baseDir)
  let root: string
  try {
    root = await realpath(rootGiven)
  } catch (error) {
    return t("attachment.rootUnreadable", { file: quote(text), root: rootGiven, code: codeOf(error) ?? String(error) })
  }
  if (windowsAbsolute(text)) return outsideMessage(text, root)
  const path = Path.resolve(rules.baseDir, asLocalPath(text))
  // Refused before the disk is touched: `..` and absolute paths leaving the folder (the folder's own path may
  // hold links, so it is compared both as given and as resolved).
  if (!inside(rootGiven, path) && !inside(root, path)) return outsideMessage(text, root)
  let real: string
  try {
    real = await realpath(path)
  } catch (error) {
    const code = codeOf(error)
    if (code === "ENOENT" || code === "ENOTDIR") return t("attachment.notFound", { file: quote(text), path })
    return t("attachment.unreadable", { file: quote(text), code: code ?? String(error) })
  }
  if (!inside(root, real)) {
    return t("attachment.linkOutside", { file: quote(text), root, real })
  }
  try {
    const info = await stat(real)
    const refused = await refusal(text, real, info)
    if (refused !== undefined) return refused
    if (info.size > rules.maxBytes) {
      return t("attachment.tooLarge", { file: quote(text), size: size(info.size), max: size(rules.maxBytes) })
    }
    // Opened once, as it will be when sent: proves it readable (and that nothing changed it meanwhile).
    const handle = await openChecked(real)
    await handle.close()
    return { path: real, name: Path.basename(path), bytes: info.size }
  } catch (error) {
    if (error instanceof Refused) return `${quote(text)} ${error.message}`
    return t("attachment.unreadable", { file: quote(text), code: codeOf(error) ?? String(error) })
  }
}

class Refused extends Error {}

/**
 * Opens a checked real path without following a link in its last part and without waiting on a pipe, and
 * checks that what was opened is a regular file of the path (a part of the path swapped for a link changes the
 * path's real form).
 */
const openChecked = async (real: string): Promise<FileHandle> => {
  const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: unknown) => {
      throw codeOf(error) === "ELOOP" ? new Refused(t("attachment.nowLink", { real })) : error
    }
  )
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new Refused(t("attachment.nowOther", { kind: kindOf(info), real }))
    const again = await realpath(real)
    if (again !== real) throw new Refused(t("attachment.nowLeads", { again, real }))
    return handle
  } catch (error) {
    await handle.close()
    throw error
  }
}

/**
 * The bytes of an attachment checked by `checkAttachment` (its real `path`), read now: refused when the path
 * was swapped for a link, a pipe or a folder since, and never more than `maxBytes` (a file on a pseudo
 * filesystem reports size 0 and may hold anything).
 */
export const readAttachment = async (path: string, maxBytes: number): Promise<Buffer> => {
  const handle = await openChecked(path).catch((error: unknown) => {
    throw error instanceof Refused ? new Error(`${path} ${error.message}`) : error
  })
  try {
    const chunks: Array<Buffer> = []
    let total = 0
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total))
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null)
      if (bytesRead === 0) break
      total += bytesRead
      if (total > maxBytes) {
        throw new Error(t("attachment.grew", { path, max: size(maxBytes) }))
      }
      chunks.push(chunk.subarray(0, bytesRead))
    }
    return Buffer.concat(chunks, total)
  } finally {
    await handle.close()
  }
}
