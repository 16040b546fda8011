/**
 * Helpers of the plan tests: a dry run that writes a plan, an apply of it, both in process against sandboxes over
 * loopback, and the Brazilian customers file they plan (Windows-1252, `;`, accents).
 */
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import * as Path from "node:path"
import { prepareExport, runExport } from "../../src/export/Export.js"
import { runImport } from "../../src/import/Pipeline.js"
import { readPlan } from "../../src/import/Plan.js"
import type { ResourceName } from "../../src/Resources.js"
import type { RunningSandbox } from "../../src/sandbox/Sandbox.js"
import { cp1252, importInto, job, put } from "../import/support.js"
import { apiOf } from "../import/support.js"

/** The account's records before the plan: three customers. */
export const seedCsv = "externalId;name;note\r\nK-1;Alfa Ltda;n1\r\nK-2;Beta & Filhos;n2\r\nK-3;Gama S.A.;n3\r\n"

/**
 * The file planned: K-1 changes its note, K-2 is as on the server, K-3 changes its name, K-4 and K-5 are new, and
 * row 7 has no name (invalid).
 */
export const planCsv = "externalId;name;note\r\n" +
  "K-1;Alfa Ltda;nota revisada\r\n" +
  "K-2;Beta & Filhos;n2\r\n" +
  "K-3;Gama Serviços S.A.;n3\r\n" +
  "K-4;Delta Manutenção;nova\r\n" +
  "K-5;Épsilon Refrigeração;nova\r\n" +
  "K-6;;sem nome\r\n"

export const seed = (sandbox: RunningSandbox, dir: string, name = "seed", apiKey?: string) =>
  importInto(sandbox, {
    resource: "customers",
    file: put(dir, `${name}.csv`, cp1252(seedCsv)),
    runDir: Path.join(dir, name)
  }, apiKey)

/** A dry run of `file` against `sandbox` that writes `plan`. */
export const planRun = (sandbox: RunningSandbox, file: string, runDir: string, plan: string, apiKey?: string) =>
  importInto(sandbox, { resource: "customers", file, runDir, dryRun: true, planOut: plan }, apiKey)

/** `fsm-bulk apply PLAN` in process, as the command builds the job from the plan. */
export const applyRun = (
  sandbox: RunningSandbox,
  plan: string,
  runDir: string,
  options: { readonly apiKey?: string; readonly otherTarget?: boolean; readonly approvedBy?: string } = {}
) =>
  Effect.gen(function*() {
    const loaded = yield* readPlan(plan)
    const c = loaded.content
    return yield* runImport(job({
      command: "apply",
      resource: c.resource as ResourceName,
      file: c.source.file,
      read: c.read,
      dateFormat: c.parse.dateFormat,
      decimal: c.parse.decimal,
      mode: c.mode,
      runDir,
      applying: { plan: loaded, approvedBy: options.approvedBy, otherTarget: options.otherTarget }
    })).pipe(Effect.provide(apiOf(sandbox, options.apiKey)))
  })

/** A CSV export of every list of `sandbox`'s account into `out` (what `sandbox --seed` reads). */
export const exportTo = (sandbox: RunningSandbox, out: string) =>
  Effect.gen(function*() {
    const prepared = yield* prepareExport({
      resources: [],
      out,
      format: "csv",
      since: undefined,
      until: undefined,
      say: () => Effect.void
    })
    return yield* runExport(prepared).pipe(Effect.provide(apiOf(sandbox)))
  }).pipe(Effect.provide(NodeContext.layer))
