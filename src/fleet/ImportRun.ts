/**
 * What a worker's import job runs (JobRunner.ts): the import pipeline, `resume`'s continuation of a job taken over,
 * the run's services and its journal. JobRunner.ts loads this module by `import()` when the worker's first import
 * job arrives, not when the worker starts, as it loads Whole.ts (onboarding and export) for the first job of those
 * kinds: a worker is ready without compiling them, and one that never runs a job of a kind never loads its code
 * (docs/development.md, "The build"). Nothing else imports this module.
 */
export { journalFile, openJournal } from "../import/Journal.js"
export { runImport } from "../import/Pipeline.js"
export { resumeRun } from "../import/Resume.js"
export { ImportServices, Journals } from "../import/Services.js"
