/**
 * One authenticated API call as the handlers see it: the caller's account, the path parameter, the query (names
 * lower-cased: the service reads them case-insensitively), the parsed JSON body and the settings that shape
 * answers.
 */
import type { Account } from "./Store.js"

export interface CallSettings {
  readonly answerDelayMs: number
  readonly emptyListStatus: 404 | 200
  /**
   * The name users' id is read back under: `userID` as captured live traffic shows (api-notes B), or `userId` as the
   * vendor's Blueprint writes it.
   */
  readonly userIdStyle: "userID" | "userId"
  /** A page larger than the resource's `maxPageSize` answers 400. */
  readonly pageCaps: boolean
  /** Page caps set by resource name (the sandbox's `pageCapOf`, changed by `setPageCap`): they hold whatever `pageCaps` says. */
  readonly pageCapOf: ReadonlyMap<string, number>
  /** The shape of error bodies other than the rate limit's. */
  readonly errorBodies: "error" | "blueprint"
  /** `/taskTypes` answers `totalItems: 0` and no `nextPage` link. */
  readonly taskTypesQuirk: boolean
}

export interface Call {
  readonly apiKey: string
  readonly account: Account
  /** The `{id}` (or `{code}`, `{clientGroupId}` …) segment of the path, as written. */
  readonly id: string | undefined
  /** Query parameters by lower-cased name. */
  readonly query: ReadonlyMap<string, string>
  /** The parsed JSON body; undefined when there was none. */
  readonly body: unknown
  readonly now: number
  /** The absolute URL of the request, for the list envelope's links. */
  readonly url: URL
  readonly settings: CallSettings
}
