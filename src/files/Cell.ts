/** One cell of a table the tool writes (a report, an export, a template): what every writer accepts. */
export type Cell = string | number | boolean | null | undefined
