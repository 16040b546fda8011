/**
 * The collaborators of an import run, as services: the job (`ImportJob`) says what to run, these say with what.
 * Where its journal goes (`Journals`), how its references are resolved (`References`), where a dry run's plan goes
 * (`PlanSink`), an onboarding's earlier steps (`EarlierSteps`) and the origin notes they said (`OriginNotes`); what it prints and when it stops are the console's `Notices` and `RunProgress` and `Signals.ts`'
 * `RunStop`. The CLI provides `ImportServices.files` under the terminal's ones (`cli/WithApi.ts`); a fleet worker swaps
 * `Journals` for its leased journal; an onboarding shares one resolver across its steps and gathers their plans.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { Api } from "../client/Api.js"
import { Notices } from "../console/Output.js"
import { RunProgress } from "../console/Progress.js"
import type { WriteError } from "../files/Write.js"
import { RunStop } from "../Signals.js"
import { type JournalWriter, openJournal } from "./Journal.js"
import { type PlanFile, writePlanFile } from "./Plan.js"
import { type RefResolver, serverResolver } from "./Refs.js"

/** Opens a run's journal (its path in the run directory). */
export class Journals extends Context.Tag("fsm-bulk/import/Journals")<
  Journals,
  { readonly open: (path: string) => Effect.Effect<JournalWriter, WriteError, Scope.Scope> }
>() {
  /** The journal file, each line written through to disk (`openJournal`). */
  static readonly file: Layer.Layer<Journals> = Layer.succeed(Journals, { open: openJournal })
}

/** The reference resolver of each run, under the run's own API. */
export class References extends Context.Tag("fsm-bulk/import/References")<
  References,
  { readonly forRun: (api: Api["Type"]) => Effect.Effect<RefResolver> }
>() {
  /** Every reference looked up on the server, cached for the run (`serverResolver`): a new cache per run. */
  static readonly server: Layer.Layer<References> = Layer.succeed(References, {
    forRun: (api) => Effect.provideService(serverResolver, Api, api)
  })
  /** One resolver for every run (an onboarding's steps learn each other's records). */
  static readonly shared = (resolver: RefResolver): Layer.Layer<References> =>
    Layer.succeed(References, { forRun: () => Effect.succeed(resolver) })
}

/** Where a dry run's plan (`--plan FILE`, `ImportJob.planOut`) goes. */
export class PlanSink extends Context.Tag("fsm-bulk/import/PlanSink")<
  PlanSink,
  {
    /** Saves the plan; gives back the file it wrote, which the run names (nothing when it kept the plan). */
    readonly save: (file: string, content: PlanFile) => Effect.Effect<string | undefined, WriteError>
  }
>() {
  /** The plan written to its file. */
  static readonly file: Layer.Layer<PlanSink> = Layer.succeed(PlanSink, {
    save: (file, content) => Effect.as(writePlanFile(file, content), file)
  })
  /** The plan handed to `keep` (an onboarding writes one file for its steps and says where itself). */
  static readonly handOver = (
    keep: (content: PlanFile) => Effect.Effect<void, WriteError>
  ): Layer.Layer<PlanSink> => Layer.succeed(PlanSink, { save: (_, content) => Effect.as(keep(content), undefined) })
}

/**
 * `apply` of an onboarding's plan: the id an earlier step's row created in this onboarding (a planned reference
 * names "the record row R of resource X creates"). A run on its own has no earlier steps: nothing by default.
 */
export class EarlierSteps extends Context.Reference<EarlierSteps>()("fsm-bulk/import/EarlierSteps", {
  defaultValue: (): { readonly createdBy: (resource: string, row: number) => string | number | undefined } => ({
    createdBy: () => undefined
  })
}) {
  static readonly created = (
    createdBy: (resource: string, row: number) => string | number | undefined
  ): Layer.Layer<EarlierSteps> => Layer.succeed(EarlierSteps, { createdBy })
}

/**
 * The notes about the files' origin ("exported from another account") already said by the runs this one is a step
 * of. A run on its own says its note naming its file (`shared: false`); an onboarding's steps share one set, owned
 * by the onboarding for its whole run (`OriginNotes.shared`), so that the note is said once, not once per step.
 */
export class OriginNotes extends Context.Reference<OriginNotes>()("fsm-bulk/import/OriginNotes", {
  defaultValue: (): {
    readonly shared: boolean
    /** True the first time `origin` is noted: the run then says it; false when an earlier step already did. */
    readonly first: (origin: string) => Effect.Effect<boolean>
  } => ({ shared: false, first: () => Effect.succeed(true) })
}) {
  /** One set of notes for the runs this layer is provided to (made once, by the run that owns them). */
  static readonly shared: Effect.Effect<Layer.Layer<OriginNotes>> = Effect.map(
    Ref.make(HashSet.empty<string>()),
    (said) =>
      Layer.succeed(OriginNotes, {
        shared: true,
        first: (origin) => Ref.modify(said, (set) => [!HashSet.has(set, origin), HashSet.add(set, origin)])
      })
  )
}

/** Every service an import run uses. */
export type ImportServices = Journals | References | PlanSink | Notices | RunProgress | RunStop

export const ImportServices = {
  /** What the CLI's runs use beside the terminal's services: the journal file, the server's references, plan files. */
  files: Layer.mergeAll(Journals.file, References.server, PlanSink.file),
  /** The same with nothing printed, no progress and no stop (runs in tests, or inside a command that prints). */
  quiet: Layer.mergeAll(Journals.file, References.server, PlanSink.file, Notices.none, RunProgress.none, RunStop.never)
} as const
