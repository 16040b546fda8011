/**
 * report.html as a browser shows it: headless Chromium's DOM after load (`--dump-dom`) or a screenshot, and the
 * page's `data-figure` values.
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import * as Path from "node:path"

export const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p))

/** Chromium's own reading of the page: the DOM after load (`--dump-dom`), or a screenshot. */
export const browse = (dir: string, url: string, extra: ReadonlyArray<string>): string => {
  if (chromium === undefined) {
    throw new Error("Chromium is missing: run scripts/ensure-chromium.sh as root (npm test does)")
  }
  return execFileSync(chromium, [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${Path.join(dir, "chromium-profile")}`,
    ...extra,
    url
  ], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "ignore"] })
}

/** `data-figure` values of a rendered DOM. */
export const figures = (dom: string): Map<string, string> =>
  new Map([...dom.matchAll(/data-figure="([^"]+)"[^>]*>([^<]*)</g)].map((m) => [m[1]!, m[2]!.replace(/,/g, "")]))
