/**
 * The names of the files a run directory holds beside its journal (`journalFile`, Journal.ts), in a module that
 * loads nothing: a fleet worker names its import jobs' outputs (fleet/JobRunner.ts) without loading the pipeline
 * that writes them, which it loads when its first import job arrives. RunDir.ts gives them to the rest of import/.
 */
export const reportCsv = "report.csv"
export const reportXlsx = "report.xlsx"
export const summaryFile = "summary.json"
export const lockFile = ".lock"
