// @ts-check
/**
 * csv-parse's options for every read of a CSV: the parser thread's (CsvParseWorker.js) and the header's from
 * the first bytes (Csv.ts) must read a file alike. Plain JavaScript, for the parser thread.
 */

/**
 * @param {string} delimiter
 * @param {number} maxRecordSize
 */
export const csvParseOptions = (delimiter, maxRecordSize) => ({
  delimiter,
  bom: true,
  relax_column_count: true,
  // A stray quote inside an unquoted cell (`Tubo 1/2"`) is text, as spreadsheets read it.
  relax_quotes: true,
  skip_empty_lines: false,
  max_record_size: maxRecordSize
})
