import { Command } from "@effect/cli"
import { Console } from "effect"
// Replaced by the sandbox implementation.
export const sandboxCommand = Command.make("sandbox", {}, () => Console.log("sandbox"))
