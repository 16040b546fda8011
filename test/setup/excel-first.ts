/**
 * The first set-up file of both tiers (vitest.config.ts), run before each test file's own imports: it mends
 * exceljs's UTF-8 decoding (src/files/ExcelSax.ts) before anything can load exceljs. The tiers' workers keep their
 * modules from one file to the next (`--no-isolate`), so the first file of a worker to load exceljs decides for
 * every later one: when that was a file that imports exceljs directly (to write a workbook) without importing
 * ExcelSax first, ExcelSax refused to load in each later file of that worker ("exceljs was loaded before
 * src/files/ExcelSax.ts"), and which files failed depended on how the run's files fell to its workers. Here, the
 * rule no longer rests on each file's first line. test/setup/excel-order-cli.test.ts pins it.
 */
import "../../src/files/ExcelSax.js"
