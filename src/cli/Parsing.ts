/**
 * The contract's parsing flags, shared by every command that reads input files (`validate`, `import`, `onboard`).
 * `auto` never guesses silently: an ambiguous file stops with an error naming the flag that settles it.
 */
import { Options } from "@effect/cli"

export const fileFormatOptions = Options.all({
  encoding: Options.choice("encoding", ["auto", "utf-8", "windows-1252"]).pipe(
    Options.withDefault("auto" as const),
    Options.withDescription("CSV text encoding (auto: UTF-8 with or without BOM, else Windows-1252)")
  ),
  delimiter: Options.choice("delimiter", ["auto", ",", ";", "tab"]).pipe(Options.withDefault("auto" as const), Options.withDescription("CSV delimiter")),
  dateFormat: Options.choice("date-format", ["auto", "yyyy-mm-dd", "dd/mm/yyyy", "mm/dd/yyyy"]).pipe(
    Options.withDefault("auto" as const),
    Options.withDescription("How dates are written (auto settles each file on its own and refuses to guess when it reads both ways)")
  ),
  decimal: Options.choice("decimal", ["auto", ".", ","]).pipe(Options.withDefault("auto" as const), Options.withDescription("Decimal mark of numbers"))
})
