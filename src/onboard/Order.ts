/**
 * The order of an onboarding's steps: parents before the rows that name them, read from the resource table
 * (`dependencyOrder`). A cycle among the sheets cannot be loaded in any order and is refused before anything is
 * read or sent, naming it.
 */
import * as Either from "effect/Either"
import { InputError } from "../Errors.js"
import { dependencies, dependencyOrder, resource, type ResourceName } from "../Resources.js"
import type { OnboardInput, StepInput } from "./Inputs.js"

export type DependenciesOf = (name: ResourceName) => ReadonlyArray<ResourceName>

const tableDependencies: DependenciesOf = (name) => dependencies(resource(name))

/** The steps in dependency order, or why there is none. */
export const orderSteps = (
  input: OnboardInput,
  dependenciesOf: DependenciesOf = tableDependencies
): Either.Either<ReadonlyArray<StepInput>, InputError> => {
  const byName = new Map(input.steps.map((s) => [s.resource, s]))
  try {
    return Either.right(dependencyOrder([...byName.keys()], dependenciesOf).map((name) => byName.get(name)!))
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause)
    return Either.left(
      new InputError({
        file: input.path,
        detail: `the ${
          input.kind === "workbook" ? "sheets" : "files"
        } refer to each other in a ${why}, so no order can load them: leave one of these references empty`,
        cause
      })
    )
  }
}
