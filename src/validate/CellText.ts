/**
 * The text of one cell as validation sees it: absent cells of ragged rows read as empty, and the formula guard
 * (`'=…`) is undone (in every file read: `Guard.restore`). A `=…` cell without it is plain text, sent as is.
 */
import { restore } from "../files/Guard.js"

export const cellText = (cells: ReadonlyArray<string>, index: number, restoreGuard: boolean): string => {
  if (index < 0) return ""
  const text = cells[index]
  if (text === undefined) return ""
  return restoreGuard ? restore(text) : text
}
