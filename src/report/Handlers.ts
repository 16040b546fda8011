/**
 * What the commands of report/Command.ts run, loaded when one of them runs (cli/Lazy.ts): the tree's flags
 * and help stay in that module, which every command loads (docs/development.md, "The build").
 */
import * as Effect from "effect/Effect"
import type { Input } from "../cli/Lazy.js"
import { type ExitCode } from "../cli/Output.js"
import { summary } from "../console/Output.js"
import type { reportConfig } from "./Command.js"
import { writeRunReport } from "./Html.js"
export const handleReport = (args: Input<typeof reportConfig>) =>
  Effect.gen(function*() {
    const file = yield* writeRunReport(args.dir)
    yield* summary(args.json, { command: "report", report: file, exitCode: 0 }, [`report: ${file}`])
    return 0 as ExitCode
  })
