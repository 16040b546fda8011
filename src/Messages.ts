/**
 * The message catalogue: every human sentence of validation, the closing lines of a run and the templates' notes, in
 * English (the default) and Brazilian Portuguese. `en` is the reference; `ptBR` is typed by its keys, so a message
 * added in English without its translation does not compile, and test/messages/catalogue.test.ts holds each
 * translation to the same `{placeholders}`.
 *
 * The language is chosen once per process at the edge (`--lang`, else `FSM_LANG`, `LC_ALL`, `LC_MESSAGES`, `LANG`:
 * src/bin.ts) and read by the plain functions that build messages (the cell parsers run per cell and have no
 * Effect context). What stays English whatever the language, because scripts read it: row statuses (`_status`,
 * the status names of the closing table), report and summary.json keys, flags, resource and column names.
 */

export type Language = "en" | "pt-BR"

export const languages: ReadonlyArray<Language> = ["en", "pt-BR"]

const en = {
  // --- cells ---------------------------------------------------------------------------------------------------
  "cell.notWholeNumber": "{value} is not a whole number{hint}",
  "cell.digitsOnly": " (write digits only, without separators)",
  "cell.tooLarge": "{value} is too large",
  "cell.badId": "{value} is not a valid id (ids are whole numbers from 1 up)",
  "cell.notYesNo": "{value} is not a yes/no value (use {words})",
  "cell.tooLong": "has {length} characters; at most {max} are allowed",
  "cell.notEmail": "{value} is not an e-mail address",
  "cell.notGuid": "{value} is not a GUID (e.g. 3f2504e0-4f89-11d3-9a0c-0305e82c3301)",
  "cell.ambiguousCode":
    "{value} is ambiguous: the codes are now the API's ({allowed}), and before this version {code} meant {before}; write the label ({labels})",
  "cell.notOneOf": "{value} is not one of {allowed}",
  "cell.jsonList": "a JSON list such as [{sample}]",
  "cell.jsonObject": "a JSON object such as {sample}",
  "cell.notJson": "{value} is not valid JSON: write {expected}",
  "cell.notShape": "{value} is not {expected}",
  "cell.itemNotObject": "item {item} of the list is not a JSON object: write {expected}",
  "cell.listSeparator": "{message} (separate list items with {separator})",
  // --- dates and times -----------------------------------------------------------------------------------------
  "date.zone":
    "{value} carries a time zone ({zone}), but the API takes local time without a zone, so it would be read {how}: write the local time without the zone{brasilia}",
  "date.zoneAsLocal": "as local time, hours off",
  "date.zoneHoursOff": "hours off",
  "date.inBrasilia": " (in Brasília time: {time})",
  "date.notReal": "{value} is not a real date",
  "time.notReal": "{value} is not a real time of day",
  "date.notYearFirst":
    "{value} is not a yyyy-mm-dd date (for day-first or month-first dates pass --date-format dd/mm/yyyy or --date-format mm/dd/yyyy)",
  "date.shortYear": "{value} has a 2-digit year: write the year with 4 digits",
  "date.excelNumber": "{value} is not a date (it looks like an Excel date number: format the column as a date)",
  "date.notDate": "{value} is not a date (write {examples})",
  "date.examplesYearFirst": "2026-12-25 or 2026-12-25T09:30",
  "date.examplesDayFirst": "25/12/2026 or 25/12/2026 09:30",
  "date.examplesMonthFirst": "12/25/2026 or 12/25/2026 09:30",
  "time.notTime": "{value} is not a time (write HH:mm or HH:mm:ss, e.g. 08:00)",
  "formats.at": "{value} (row {row}, column {column})",
  "formats.dayFirst": "day-first",
  "formats.monthFirst": "month-first",
  "formats.datesDisagree":
    "dates disagree on the day/month order: {first} is {firstOrder} but {second} is {secondOrder}; correct the file, or pass {flags} (dates that do not fit become invalid rows)",
  "formats.aDecimalPoint": "a decimal point",
  "formats.aDecimalComma": "a decimal comma",
  "formats.numbersDisagree":
    "numbers disagree on the decimal mark: {first} has {firstMark} but {second} has {secondMark}; correct the file, or pass {flags} (numbers that do not fit become invalid rows)",
  "formats.unsettledDates":
    "cannot tell day-first from month-first dates: {readings}, and no date in the file settles it; pass {flags}",
  "formats.unsettledDecimal":
    "cannot tell the decimal mark: {readings}, and no number in the file settles it; pass {flags}",
  "formats.dateReadings": "{value} could be {first} or {second}",
  "formats.numberReadings": "{value} reads as {point} with a decimal point and as {comma} with a decimal comma",
  "formats.months": "January,February,March,April,May,June,July,August,September,October,November,December",
  // --- numbers -------------------------------------------------------------------------------------------------
  "number.wrongMark": "{value} is not written with this file's {mark} (e.g. {example})",
  "number.decimalPoint": "decimal point",
  "number.decimalComma": "decimal comma",
  "number.notNumber": "{value} is not a number",
  "number.outOfRange": "{value} is out of range ({min} to {max})",
  "number.tooSmall": "{value} is too small (at least {min})",
  "number.tooLargeMax": "{value} is too large (at most {max})",
  // --- CPF / CNPJ ----------------------------------------------------------------------------------------------
  "cpf.sameDigits": "{value} is not a valid CPF (all digits are the same)",
  "cnpj.sameDigits": "{value} is not a valid CNPJ (all digits are the same)",
  "cpfCnpj.checkDigits": "{value} has wrong check digits",
  "cpfCnpj.digits": "{value} has {count} digits: a CPF has 11 and a CNPJ 14{hint}",
  "cpfCnpj.leadingZero": " (did a spreadsheet drop a leading zero? format the column as text)",
  "cpfCnpj.notCpfCnpj": "{value} is not a CPF or CNPJ",
  // --- rows ----------------------------------------------------------------------------------------------------
  "row.required": "required",
  "row.requiredEither": "required: fill {value} or {ref}",
  "row.repeats": "{value} repeats row {first}{note}",
  "row.mustBeUnique": "; {field} must be unique in the account",
  "row.alternateKey": "{value} repeats row {first}: {field} is an alternate key, so both rows are one record",
  "row.or": " or ",
  "row.sameParent": " (same {column} {value})",
  "row.needed": "needed to find the record to {mode}: fill {columns}",
  "row.noKey":
    "no key: upsert finds each record by {identity}, and a row without one would be created again on every run; fill {key}, or create such rows with --mode create",
  "ref.missing": "no {resource} record with {by} {value}",
  // --- where in a file -----------------------------------------------------------------------------------------
  "at.row": "row {row}",
  "at.column": "column {column}",
  // --- columns of a file ---------------------------------------------------------------------------------------
  "columns.unknown":
    "{file}: column {column} is not a known field of {resource}{hint}; ignored, its values are not sent",
  "columns.didYouMean": " (did you mean {name}?)",
  "columns.noName": "{file}: column {index} has no name; its values are ignored",
  "columns.requiredMissing": "required column missing for {mode}: {names}{hint}",
  "columns.requiredMissingMany": "required columns missing for {mode}: {names}{hint}",
  // --- the closing lines ---------------------------------------------------------------------------------------
  "summary.heading": "{title}: {rows} rows in {took}{dry}",
  "summary.dryRun": " (dry run: nothing was written)",
  "summary.requests": "requests",
  "summary.rateLimited": "rate-limited",
  "summary.retries": "retries",
  "summary.reports": "reports: {csv}, report.xlsx and report.html",
  "summary.runDir": "run directory: {dir}",
  "summary.columnsNotSent": "columns not sent: {columns}",
  "summary.skippedRows": "rows skipped as not data: {rows}{more}",
  "summary.skippedRow": "row {row} ({why})",
  "summary.andMore": ", and {count} more",
  "wrong.title": "what went wrong, most rows first:",
  "wrong.example": "row {row}: {error}",
  "wrong.moreKinds": "  … and {count} more kinds: see {where}",
  "wrong.moreKind": "  … and {count} more kind: see {where}",
  "wrong.seeReports": "report.csv or report.html",
  "next.next": "next",
  "next.and": "and",
  "next.validateAgain": "next: correct the rows named above in {source} and validate it again",
  "next.import": "next: {command}",
  "next.fixInvalid":
    "{lead}: correct the invalid rows in a copy of {report} (keep _row; blank cells keep the original), then",
  "next.missingRefs":
    "{lead}: {count} rows name records that do not exist (see _error): import those records first, then",
  "next.missingRef": "{lead}: 1 row names a record that does not exist (see _error): import those records first, then",
  "next.missingRefsFix": "      {command} --only failed, or correct the reference in a copy of {report}",
  "next.missingRefsFixed": "      (keep _row): {command} --only failed --fixed CORRECTED.csv",
  "next.resend": "{lead}: send the failed and in-doubt rows again: {command}",
  "next.resendOther": "{lead}: send the other failed and in-doubt rows again: {command}",
  "next.planAgain": "{lead}: rows in conflict no longer match the plan (see _error); plan them again: {command}",
  "next.mergeLeft":
    "{lead}: rows still in conflict changed on the server in the same fields as the file (see _error): send the",
  "next.mergeLeftHow": "      file's values with {command} --only conflict --overwrite, or correct them with --fixed",
  "next.overwriteLeft":
    "{lead}: rows still in conflict cannot be written as they are (see _error); correct them in a copy of",
  "next.overwriteLeftHow": "      {report} (keep _row): {command} --only conflict --fixed CORRECTED.csv",
  "next.conflict":
    "{lead}: records changed on the server since the export are in conflict (see _error); keep the server's changes to",
  "next.conflictHow":
    "      other fields with {command} --only conflict --merge, or send the file's values: --overwrite",
  // --- progress ------------------------------------------------------------------------------------------------
  "progress.rowsRead": "{rows} rows read",
  "progress.shareOf": "~{percent}% of {size}",
  "progress.rows": "{done}/{total} rows",
  "progress.loggingIn": "logging in",
  "progress.paused": "paused after a rate limit, resumes at {time}",
  "progress.waitingBudget": "waiting for the request budget",
  "progress.perMinute": "{now} of {limit} req/min",
  "progress.eta": "ETA {time}",
  // --- report.html and report.xlsx's Summary -----------------------------------------------------------------
  "report.dryRun": "dry run",
  "report.dryRunBanner": "Dry run: a rehearsal. Nothing was written to the API; each row shows what it would get.",
  "report.wouldEndWell": "every row would end well",
  "report.wouldNotEndWell": "some rows would not end well",
  "report.dryRunMode": " (dry run: nothing was written)",
  "report.xlsxDryRun": "DRY RUN: a rehearsal, nothing was written",
  "report.exit0": "every row ended well",
  "report.exit1": "at least one row did not end well",
  "report.exit2": "bad usage or unreadable input: nothing was sent",
  "report.exit3": "the run was aborted: `fsm-bulk resume` continues it",
  "report.exit": "exit {code}: {meaning}",
  "report.run": "Run",
  "report.rowsByStatus": "Rows by status",
  "report.rowsByPlannedStatus": "Rows by planned status",
  "report.errorsByKind": "Errors by kind",
  "report.steps": "Steps",
  "report.wouldChange": "What would change",
  "report.columnPlan": "Column plan",
  "report.sendsAgainstBudget": "Sends against the budget",
  "report.howLong": "How long rows took",
  "report.attemptsPerRow": "Attempts per row",
  "report.slowestRows": "Slowest rows",
  "report.earlierAttempts": "What the earlier attempts met",
  "report.settings": "Settings",
  "report.label.command": "command",
  "report.label.resource": "resource",
  "report.label.mode": "mode",
  "report.label.dryRun": "dry run",
  "report.label.source": "source",
  "report.label.target": "target",
  "report.label.runDir": "run directory",
  "report.label.rerunOf": "rerun of",
  "report.label.baseUrl": "base URL",
  "report.label.started": "started",
  "report.label.finished": "finished",
  "report.label.duration": "duration",
  "report.label.rows": "rows",
  "report.label.total": "total",
  "report.label.requests": "requests",
  "report.label.retries": "retries",
  "report.label.rateLimitAnswers": "rate-limit answers",
  "report.label.rateLimited": "rate-limited (429)",
  "report.label.interrupted": "interrupted",
  "report.label.budget": "budget",
  "report.label.requestBudget": "request budget",
  "report.label.dateFormat": "date format",
  "report.label.decimalMark": "decimal mark",
  "report.label.version": "version",
  "report.label.exitCode": "exit code",
  "report.label.aborted": "aborted",
  "report.label.appliedPlan": "applied plan",
  "report.label.approvedBy": "approved by",
  "report.budget": "{limit} requests per {window}",
  "report.embeddedSandbox": "the embedded sandbox",
  "report.notFinished": "not finished",
  "report.notGiven": "not given",
  "report.yes": "yes",
  "report.no": "no",
  "report.comma": "comma (,)",
  "report.point": "point (.)",
  "report.noRows": "No rows.",
  "report.noErrors": "no errors",
  "report.noRowError": "No row has an error.",
  "report.noRowSent": "No row was sent.",
  "report.noRequestSent": "No request was sent by this run.",
  "report.noRowWouldChange": "No row would change a record.",
  "report.aNewRecord": "a new record",
  "report.unwellOne": "{rows} row did not end well ({statuses}), and no message was kept for it here: see {where}.",
  "report.unwellMany": "{rows} rows did not end well ({statuses}), and no message was kept for them here: see {where}.",
  "report.eachStepPage": "each step's page",
  "report.rowExample": "row {row}: {error}",
  "report.errorsHeadings": "rows|error (values left out)|examples",
  "report.exampleHeadings": "example (first row)|rows",
  "report.stepsHeadings": "step|rows|how they ended|requests|exit|report",
  "report.report": "report",
  "report.slowestHeadings": "row|took|status|HTTP|attempts|X-Request-Id",
  "report.attemptsHeadings": "attempts|rows",
  "report.outcomeHeadings": "outcome|times",
  "report.wouldChangeHeadings": "row|would be|record|fields: as read → as sent",
  "report.plan": "The plan",
  "report.planWritten":
    "This dry run wrote the plan {file}, sha256 {sha}: what the approver signs off, and all `fsm-bulk apply` sends.",
  "report.planApplied": "This run applied the plan {file}, sha256 {sha}, made against {target}.",
  "report.planApprover": "Approved by {name}.",
  "report.planNoApprover": "No approver was named (`--approved-by`).",
  "report.planSigner": "Signed by key {keyId}{trusted}.",
  "report.planTrusted": ", the key given with --public-key",
  "report.planMissing":
    "The plan file {file} is not there now: its steps and rows are not drawn (the run's own are below).",
  "report.planChanged":
    "The plan file {file} changed since (its sha256 is now {sha}): its steps and rows are not drawn (the run's own are below).",
  "report.planStepsHeadings": "step|rows|planned|applied|report",
  "report.planRowsHeadings": "step|row|planned|write|key, record|fields: as read → as sent",
  "report.planRef": "{field} → the record row {row} of {resource} creates",
  "report.planNoWrite": "No row of the plan sends a write.",
  "report.planFirstOf":
    "The first {shown} of the plan's {total} rows that send a write; `fsm-bulk plan show {file} --all` lists them all.",
  "report.latencyNote":
    "From the moment a row's write was announced in the journal to its outcome: waits for the request budget and retries included.",
  "report.firstOf": "The first {shown} of {total} rows; report.csv lists every row's changes.",
  "report.moreKinds": "{count} more kinds: see report.csv.",
  "report.footer":
    "Written by fsm-bulk from {dir}/summary.json and journal.ndjson. report.csv and report.xlsx hold every row.",
  // --- onboarding --------------------------------------------------------------------------------------------
  "onboard.stopping": "stopping after the rows in flight of the current step",
  "onboard.stopHint":
    "continue it with `{command}` (steps that ended are kept, the step in progress continues from its journal, the rest run)",
  "onboard.plan": "onboard {path}: {count} steps in dependency order{dry}",
  "onboard.planOne": "onboard {path}: {count} step in dependency order{dry}",
  "onboard.planDryRun": " (dry run: nothing will be written)",
  "onboard.firstStep": "{resource} ({rows} rows)",
  "onboard.firstStepOne": "{resource} ({rows} row)",
  "onboard.notRead": "not read (notes): {sheets}",
  "onboard.fixInvalid": "{lead}: correct the invalid rows in a copy of {report} (keep _row), then",
  "onboard.missingRefsFix": "      {command} --only failed, or correct the reference (keep _row):",
  "onboard.then": "then",
  "onboard.skippedForParent": "{lead}: the rows skipped for their parent: {command}",
  "onboard.heading": "onboard: {rows} rows in {steps} of {total} steps, {took}{dry}",
  "onboard.closingDryRun": " (dry run: nothing was written; the statuses are what the rows would get)",
  "onboard.notStarted": "not started: {steps}; {hint}",
  "onboard.seeReports": "each step's {csv}, or {page}",
  "onboard.rowsToLookAt": "rows to look at: {file}",
  "onboard.reports": "reports: {dir}/<resource>/{csv} (and report.xlsx), one per step",
  "onboard.summary": "summary: {file}",
  "onboard.wouldSend": "would send {count} (not compared)",
  "onboard.skippedParent": "skipped {count} (parent row did not end well)",
  "onboard.noRows": "no rows",
  "onboard.rows": "{rows} rows",
  "onboard.rowOne": "{rows} row",
  "onboard.stopped": " (stopped)",
  // --- templates -----------------------------------------------------------------------------------------------
  "template.text": "text",
  "template.textMax": "text (at most {max} characters)",
  "template.wholeNumber": "whole number{range}",
  "template.number": "number{range}; decimal mark \".\" or \",\"",
  "template.rangeFromTo": " from {min} to {max}",
  "template.rangeAtLeast": " of at least {min}",
  "template.rangeUpTo": " up to {max}",
  "template.boolean": "true or false (also {spellings})",
  "template.booleanSpellings": "sim/não, yes/no, 1/0; x means true",
  "template.date":
    "date: yyyy-mm-dd, or yyyy-mm-ddThh:mm:ss with a time (dd/mm/yyyy also read; an Excel date cell works too)",
  "template.time": "time of day: hh:mm:ss",
  "template.email": "e-mail address",
  "template.cpfCnpj": "CPF (11 digits) or CNPJ (14 digits); dots, dashes and slash are accepted",
  "template.guid": "GUID, such as 3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "template.enum": "one of the listed numbers",
  "template.json": "JSON",
  "template.file": "path of a local file, relative to this file",
  "template.byName": "one of the listed names",
  "template.aList": " (a list)",
  "template.apiCode": "API code {code}",
  "template.required": "Required when a record is created",
  "template.requiredEither": "Required when a record is created: fill this or {column}",
  "template.optional": "Optional",
  "template.jsonListSyntax": "a JSON list of objects with the keys {keys}: [{sample}]",
  "template.jsonObjectSyntax": "a JSON object with the keys {keys}",
  "template.listSyntax": "a list: separate the items with {separator} (for example {example})",
  "template.several": "; several: separate them with {separator}",
  "template.refByKey": "names the {target} record by its {key}{several}; fill either this or {column}",
  "template.refById": "the server id of the {target} record{several}; or name it by its {key} in {column} instead",
  "template.refDescription": "{description}, by {key}",
  "template.noteType": "Type: {type}",
  "template.noteValues": "Values: {values}",
  "template.noteCell": "Cell: {syntax}",
  "template.noteExample": "Example: {example}",
  "template.alsoBoolean": "Also read: {spellings}.",
  "template.alsoEnum": "Also read: the number, or the name in Portuguese.",
  "template.usualValues": "Usual values: {values}. {also} Anything else is reported by fsm-bulk validate.",
  "template.fillSheet":
    "Fill the {sheet} sheet: one row per record, below the header. Row 2 is an example: replace it or delete it (left as it is, it is reported, not imported).",
  "template.leaveEmpty":
    "Leave a cell empty when you have no value. Column names must stay as they are; columns you do not need can be deleted.",
  "template.orange":
    "Orange headers are required when a record is created (light orange: fill the id column or the column that names the record).",
  "template.lists":
    "Lists go in one cell, separated by {separator}. A reference to another record is given by its id, or by its key in the column beside it.",
  "template.importWith": "Import with: {command}   (check first with: {check})",
  "template.headings": "Column|Required|Type|Description|Values|Cell syntax|Example",
  "workbook.title": "Onboarding workbook",
  "workbook.order": "One sheet per resource, in the order they load: parents first, then the rows that name them.",
  "workbook.fill1":
    "Fill the sheets you need, one row per record below the header; leave the others empty (a sheet with no rows",
  "workbook.fill2": "loads nothing). Column names must stay as they are; columns you do not need can be deleted.",
  "workbook.notes":
    "Each header cell has a note: what the column holds, whether it is required, the values it takes, an example.",
  "workbook.orange":
    "Orange headers are required when a record is created (light orange: fill the id column or the key column).",
  "workbook.names":
    "A row names records of earlier sheets by their key (customerExternalId, userToLogin …). Lists: separate with {separator}.",
  "workbook.notRead": "This README, and sheets whose names start with _, are not read: keep your notes there.",
  "workbook.dryRun": "See the plan without writing anything: {command}",
  "workbook.then": "Then: {command}",
  "workbook.headings": "Step|Sheet|Resource|Names records of",
  // --- report.html: the budget chart, the column plan, empty sheets ----------------------------------------------
  "chart.budget": "budget: {limit} per {window}",
  "chart.offScale": "↑ budget {limit} per {window}",
  "chart.offScaleNote":
    " A budget marked ↑ is far above what was sent (at most {peak} in a window): the scale fits the sends.",
  "chart.label": "sends per window",
  "chart.barTitle": "{time}: {count} sent in the last {window}",
  "chart.limitedTitle": "{count} answered with a rate limit",
  "chart.caption":
    "Each bar: the attempts of rows' writes (retries included) sent in the budget's window before that moment, counted when each row finished; at most {peak}.",
  "chart.sessions": " The run had several sessions (resume): each is drawn against its own budget.",
  "chart.notInBars":
    " Lookups, logins and list pages also use the budget but are not in the bars; the run's total is under Run.",
  "chart.red": " Red: attempts answered with a rate limit.",
  "onboard.emptySheets": "{count} sheets with no rows, not imported: {names}",
  "onboard.emptySheet": "1 sheet with no rows, not imported: {names}",
  "onboard.emptyFiles": "{count} files with no rows, not imported: {names}",
  "onboard.emptyFile": "1 file with no rows, not imported: {names}",
  "onboard.readOnlySheets": "{count} sheets of read-only lists, not imported (the API cannot write them): {names}",
  "onboard.readOnlySheet": "1 sheet of read-only lists, not imported (the API cannot write them): {names}",
  "onboard.readOnlyFiles": "{count} files of read-only lists, not imported (the API cannot write them): {names}",
  "onboard.readOnlyFile": "1 file of read-only lists, not imported (the API cannot write them): {names}",
  "report.mappingRead": "Read through the mapping profile {file} (sha256 {sha}), header on row {row}.",
  "report.planHeadings": "source column|field|how",
  "report.notSent": "not sent",
  "report.withValueMap": ", with a value map",
  "report.skippedRows": "Rows skipped as not data ({count}): {rows}.",
  "report.skippedRow": "row {row} ({why})",
  "report.notWritten": "fsm-bulk: could not write {file} ({problem}); `{command}` writes it again",
  // --- a run stopped, columns and cells of a file ------------------------------------------------------------------
  "stop.writeFailed":
    "{problem}; the run stopped after {count} requests: what was sent is in the journal, continue with `{command}` once that is fixed",
  "stop.writeFailedOne":
    "{problem}; the run stopped after 1 request: what was sent is in the journal, continue with `{command}` once that is fixed",
  "columns.hidden":
    "{file}: column {column} is hidden in the sheet; ignored, its values are not sent (unhide it or pass --include-hidden)",
  "columns.retired": "{file}: column {column} is no longer used ({why}); its values are ignored",
  "columns.twice": "columns {first} and {second} both give {field}; keep one of them",
  "columns.hiddenHint": " (column {column} is hidden in the sheet: unhide it or pass --include-hidden)",
  "columns.misspelling": " (is column {column} a misspelling of {name}?)",
  "columns.or": " or ",
  "columns.createInstead": ", or import the file with --mode create to create every row as a new record",
  "columns.noIdentity":
    "{resource} records have neither an id nor a key, so rows cannot be matched to records to {mode}",
  "columns.misspeltKey":
    "{column} is not a column of {resource}: did you mean {name}? {mode} finds each record by {columns}, so this column must be spelt exactly; rename it{instead}",
  "columns.noKeyUpsert":
    "{resource} records have no key, so upsert finds them by {columns} (rows with it empty are created) and the file has no such column{hint}; to create every row as a new record, import the file with --mode create or give it an empty {first} column",
  "columns.needsRecord": "{mode} needs a column to find each record by: {columns}{hint}{why}{instead}",
  "columns.upsertWhy": "; without one, every import of the file would create its rows again",
  "columns.addColumn": "; add the column{instead}",
  "columns.needsParent": "{mode} needs the parent's column: {columns}{hint}",
  "cell.errorValueText":
    "the error value {code}, not data (a spreadsheet saved the error as text): correct the cell in the sheet",
  "cell.errorValue": "the error value {code}, not data: correct the cell in the sheet",
  "cell.formulaError":
    "a formula whose saved result is the error {code}: correct the formula (or the cells it uses) in the sheet, or replace it with a value",
  "cell.unreadable": "a cell whose content cannot be read ({value})",
  "cell.tooLongExcel": "{length} characters: a cell holds at most {max} (Excel's limit)",
  "row.hidden":
    "not imported: row {row} is hidden in the spreadsheet (hidden by hand, or filtered out by a filter); to import it, unhide it or pass --include-hidden",
  "row.beyondHeader": "(beyond the last column)",
  "row.ragged": "{count} values beyond the header's {width} columns ({shown}); a value may hold an unquoted delimiter",
  "row.raggedOne": "1 value beyond the header's {width} columns ({shown}); a value may hold an unquoted delimiter",
  "row.formerCode":
    "{column}: {value} is this tool's former code for {label}, sent as the API's {code}; write the label {label}",
  "row.unknownProperty": "{column}: {name} is not a known property ({known}); sent as given",
  "row.example": "this is the template's example row; delete it (or replace its values with yours)",
  "cell.formulaNoResult":
    "a formula without a saved result (the program that wrote the file does not calculate formulas): open the file in Excel and save it again",
  "attachment.outside":
    "{file} is outside the attachments folder {root}: attachments must be inside the input file's folder (--attachments-root DIR names another folder)",
  "attachment.linkOutside":
    "{file} leads outside the attachments folder {root} (it is a link to {real}): attachments must be inside the input file's folder (--attachments-root DIR names another folder)",
  "attachment.system": "{file} is a system file ({real}), not a document: files under {folder} are never attached",
  "attachment.pseudo": "{file} is a system file ({real} is on {fs}), not a document",
  "attachment.notFile": "{file} is {kind}, not a file",
  "attachment.rootUnreadable": "{file} cannot be checked: the attachments folder {root} cannot be read ({code})",
  "attachment.notFound": "{file} not found (looked for {path})",
  "attachment.unreadable": "{file} cannot be read ({code})",
  "attachment.tooLarge": "{file} is {size}; attachments are limited to {max}",
  "attachment.aFolder": "a folder",
  "attachment.aPipe": "a named pipe",
  "attachment.aSocket": "a socket",
  "attachment.aDevice": "a device",
  "attachment.somethingElse": "something other than a file",
  "attachment.nowLink": "is now a link ({real}), not the file that was checked",
  "attachment.nowOther": "is now {kind} ({real}), not a file",
  "attachment.nowLeads": "now leads to {again}, not to the file that was checked ({real})",
  "attachment.grew": "{path} is larger than {max} now; attachments are limited to {max}",
  // --- mapping profiles (src/mapping) and the header a file is read with ------------------------------------------
  "mapping.otherResource": "the profile is for {profile}, not {resource}",
  "mapping.headerRowMissing": "headerRow {row} (in {profile}) is blank or not among the first {count} rows",
  "mapping.notAColumn": "{property}: \"{name}\" is not a column of {resource} (one of {columns})",
  "mapping.noSourceColumn": "{property}: the file {file} has no column \"{name}\" (its header, row {row}: {header})",
  "mapping.givenTwice": "{property}: {field} is given twice (by {first} and by {second}); keep one",
  "mapping.byColumn": "column \"{name}\"",
  "mapping.aboveHeader": "above the header",
  "mapping.beyondHeader": "no value under the header's columns",
  "mapping.notData": "not data: \"{text}\"",
  "mapping.cannotRead": "cannot read the mapping profile ({code})",
  "mapping.invalid": "not a valid mapping profile: {detail}",
  "mapping.changedSincePlan":
    "{file}: the mapping profile changed since the plan {plan} was made: nothing was sent; make a new plan",
  "mapping.readWith": "mapping {file} (sha256 {sha}…): header on row {row}",
  "mapping.ignored": "(ignored, not sent)",
  "mapping.how.same name": "same name",
  "mapping.how.renamed": "renamed",
  "mapping.how.composed": "composed",
  "mapping.how.constant": "constant",
  "mapping.how.sent as given": "sent as given",
  "mapping.how.ignored": "ignored",
  "mapping.how.tool column": "tool column",
  "mapping.withValueMap": " with a value map",
  "mapping.why.columnName": "column name",
  "mapping.why.label": "the field's label",
  "mapping.why.header": "header \"{name}\"",
  "mapping.why.values": "values look like {shape}",
  "mapping.why.none": "no field matches",
  "mapping.shape.CPF/CNPJ": "CPF/CNPJ",
  "mapping.shape.e-mail": "e-mail",
  "mapping.shape.phone": "phone",
  "mapping.shape.date": "date",
  "mapping.shape.latitude": "latitude",
  "mapping.shape.longitude": "longitude",
  "mapping.shape.yes/no": "yes/no",
  "mapping.sure.high": "high",
  "mapping.sure.medium": "medium",
  "mapping.sure.low": "low",
  "mapping.sure.-": "-",
  "mapping.tableHeadings": "source column|→ field|why|sure|sample values",
  "mapping.keyFromDocument": "{key}: no key column; proposed from \"{source}\" (each record's CPF/CNPJ): review it",
  "mapping.noKey": "{key}: no key column; upsert needs one (or import with --mode create)",
  "mapping.headerFound": "{resource} from {file}{sheet}: header on row {row}{above}",
  "mapping.inSheet": " (sheet \"{sheet}\")",
  "mapping.aboveNotRead": " ({count} rows above it not read)",
  "mapping.aboveNotReadOne": " (1 row above it not read)",
  "mapping.missing": "required for create/upsert and not mapped: {fields}",
  "mapping.note": "note: {note}",
  "mapping.valuesOf": "values of \"{source}\" → {field} ({count} distinct):",
  "mapping.needsValueMap": "needs a value map",
  "mapping.nameToLookUp": "(a name to look up)",
  "mapping.wrote": "wrote {file}: review it, then: {command}",
  "mapping.writeIt": "write it with --out FILE.json, review it, then: {command}",
  "header.readFrom": "the header was read from row {row}{sheet}; the first rows:",
  "header.ofSheet": " of sheet \"{sheet}\"",
  "header.row": "row {row}: {text}",
  "header.blank": "(blank)",
  "header.likely":
    "row {row} looks like the header (a title above the table?): {command} proposes a mapping profile that reads it there; then validate or import with --map PROFILE"
} as const

export type MessageKey = keyof typeof en

/** The `{name}`s of a message. */
type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer Rest}` ? P | Placeholders<Rest> : never

type Params<K extends MessageKey> = [Placeholders<(typeof en)[K]>] extends [never] ? []
  : [params: { readonly [P in Placeholders<(typeof en)[K]>]: string | number }]

const ptBR: { readonly [K in MessageKey]: string } = {
  "cell.notWholeNumber": "{value} não é um número inteiro{hint}",
  "cell.digitsOnly": " (escreva só os dígitos, sem separadores)",
  "cell.tooLarge": "{value} é grande demais",
  "cell.badId": "{value} não é um id válido (ids são números inteiros a partir de 1)",
  "cell.notYesNo": "{value} não é um valor sim/não (use {words})",
  "cell.tooLong": "tem {length} caracteres; o máximo permitido é {max}",
  "cell.notEmail": "{value} não é um endereço de e-mail",
  "cell.notGuid": "{value} não é um GUID (ex.: 3f2504e0-4f89-11d3-9a0c-0305e82c3301)",
  "cell.ambiguousCode":
    "{value} é ambíguo: os códigos agora são os da API ({allowed}), e antes desta versão {code} significava {before}; escreva o nome ({labels})",
  "cell.notOneOf": "{value} não é um destes: {allowed}",
  "cell.jsonList": "uma lista JSON como [{sample}]",
  "cell.jsonObject": "um objeto JSON como {sample}",
  "cell.notJson": "{value} não é um JSON válido: escreva {expected}",
  "cell.notShape": "{value} não é {expected}",
  "cell.itemNotObject": "o item {item} da lista não é um objeto JSON: escreva {expected}",
  "cell.listSeparator": "{message} (separe os itens da lista com {separator})",
  "date.zone":
    "{value} traz um fuso horário ({zone}), mas a API recebe a hora local sem fuso, então seria lida {how}: escreva a hora local sem o fuso{brasilia}",
  "date.zoneAsLocal": "como hora local, com horas de diferença",
  "date.zoneHoursOff": "com horas de diferença",
  "date.inBrasilia": " (no horário de Brasília: {time})",
  "date.notReal": "{value} não é uma data que existe",
  "time.notReal": "{value} não é um horário que existe",
  "date.notYearFirst":
    "{value} não é uma data aaaa-mm-dd (para datas com o dia ou o mês primeiro use --date-format dd/mm/yyyy ou --date-format mm/dd/yyyy)",
  "date.shortYear": "{value} tem o ano com 2 dígitos: escreva o ano com 4 dígitos",
  "date.excelNumber": "{value} não é uma data (parece um número de data do Excel: formate a coluna como data)",
  "date.notDate": "{value} não é uma data (escreva {examples})",
  "date.examplesYearFirst": "2026-12-25 ou 2026-12-25T09:30",
  "date.examplesDayFirst": "25/12/2026 ou 25/12/2026 09:30",
  "date.examplesMonthFirst": "12/25/2026 ou 12/25/2026 09:30",
  "time.notTime": "{value} não é um horário (escreva HH:mm ou HH:mm:ss, ex.: 08:00)",
  "formats.at": "{value} (linha {row}, coluna {column})",
  "formats.dayFirst": "com o dia primeiro",
  "formats.monthFirst": "com o mês primeiro",
  "formats.datesDisagree":
    "as datas discordam na ordem dia/mês: {first} está {firstOrder} mas {second} está {secondOrder}; corrija o arquivo, ou use {flags} (datas que não se encaixarem viram linhas inválidas)",
  "formats.aDecimalPoint": "ponto decimal",
  "formats.aDecimalComma": "vírgula decimal",
  "formats.numbersDisagree":
    "os números discordam no separador decimal: {first} tem {firstMark} mas {second} tem {secondMark}; corrija o arquivo, ou use {flags} (números que não se encaixarem viram linhas inválidas)",
  "formats.unsettledDates":
    "não dá para saber se as datas têm o dia ou o mês primeiro: {readings}, e nenhuma data do arquivo decide; use {flags}",
  "formats.unsettledDecimal":
    "não dá para saber o separador decimal: {readings}, e nenhum número do arquivo decide; use {flags}",
  "formats.dateReadings": "{value} pode ser {first} ou {second}",
  "formats.numberReadings": "{value} vale {point} com ponto decimal e {comma} com vírgula decimal",
  "formats.months": "janeiro,fevereiro,março,abril,maio,junho,julho,agosto,setembro,outubro,novembro,dezembro",
  "number.wrongMark": "{value} não está escrito com o {mark} deste arquivo (ex.: {example})",
  "number.decimalPoint": "ponto decimal",
  "number.decimalComma": "vírgula decimal",
  "number.notNumber": "{value} não é um número",
  "number.outOfRange": "{value} está fora do intervalo ({min} a {max})",
  "number.tooSmall": "{value} é pequeno demais (no mínimo {min})",
  "number.tooLargeMax": "{value} é grande demais (no máximo {max})",
  "cpf.sameDigits": "{value} não é um CPF válido (todos os dígitos são iguais)",
  "cnpj.sameDigits": "{value} não é um CNPJ válido (todos os dígitos são iguais)",
  "cpfCnpj.checkDigits": "{value} tem dígitos verificadores errados",
  "cpfCnpj.digits": "{value} tem {count} dígitos: um CPF tem 11 e um CNPJ 14{hint}",
  "cpfCnpj.leadingZero": " (a planilha tirou um zero à esquerda? formate a coluna como texto)",
  "cpfCnpj.notCpfCnpj": "{value} não é um CPF nem um CNPJ",
  "row.required": "obrigatório",
  "row.requiredEither": "obrigatório: preencha {value} ou {ref}",
  "row.repeats": "{value} repete a linha {first}{note}",
  "row.mustBeUnique": "; {field} deve ser único na conta",
  "row.alternateKey":
    "{value} repete a linha {first}: {field} é uma chave alternativa, então as duas linhas são um só registro",
  "row.or": " ou ",
  "row.sameParent": " (mesmo {column} {value})",
  "row.needed": "necessário para achar o registro ({mode}): preencha {columns}",
  "row.noKey":
    "sem chave: o upsert acha cada registro por {identity}, e uma linha sem ela seria criada de novo a cada execução; preencha {key}, ou crie essas linhas com --mode create",
  "ref.missing": "nenhum registro de {resource} com {by} {value}",
  "at.row": "linha {row}",
  "at.column": "coluna {column}",
  "columns.unknown":
    "{file}: a coluna {column} não é um campo conhecido de {resource}{hint}; ignorada, seus valores não são enviados",
  "columns.didYouMean": " (você quis dizer {name}?)",
  "columns.noName": "{file}: a coluna {index} não tem nome; seus valores são ignorados",
  "columns.requiredMissing": "falta a coluna obrigatória para {mode}: {names}{hint}",
  "columns.requiredMissingMany": "faltam as colunas obrigatórias para {mode}: {names}{hint}",
  "summary.heading": "{title}: {rows} linhas em {took}{dry}",
  "summary.dryRun": " (simulação: nada foi gravado)",
  "summary.requests": "requisições",
  "summary.rateLimited": "limitadas",
  "summary.retries": "novas tentativas",
  "summary.reports": "relatórios: {csv}, report.xlsx e report.html",
  "summary.runDir": "pasta da execução: {dir}",
  "summary.columnsNotSent": "colunas não enviadas: {columns}",
  "summary.skippedRows": "linhas puladas por não serem dados: {rows}{more}",
  "summary.skippedRow": "linha {row} ({why})",
  "summary.andMore": ", e mais {count}",
  "wrong.title": "o que deu errado, do mais frequente ao menos:",
  "wrong.example": "linha {row}: {error}",
  "wrong.moreKinds": "  … e mais {count} tipos de erro: veja {where}",
  "wrong.moreKind": "  … e mais {count} tipo de erro: veja {where}",
  "wrong.seeReports": "report.csv ou report.html",
  "next.next": "próximo passo",
  "next.and": "e",
  "next.validateAgain": "próximo passo: corrija as linhas indicadas acima em {source} e valide de novo",
  "next.import": "próximo passo: {command}",
  "next.fixInvalid":
    "{lead}: corrija as linhas inválidas numa cópia de {report} (mantenha _row; células vazias mantêm o original), depois",
  "next.missingRefs":
    "{lead}: {count} linhas citam registros que não existem (veja _error): importe esses registros primeiro, depois",
  "next.missingRef":
    "{lead}: 1 linha cita um registro que não existe (veja _error): importe esse registro primeiro, depois",
  "next.missingRefsFix": "      {command} --only failed, ou corrija a referência numa cópia de {report}",
  "next.missingRefsFixed": "      (mantenha _row): {command} --only failed --fixed CORRIGIDO.csv",
  "next.resend": "{lead}: envie de novo as linhas que falharam ou ficaram em dúvida: {command}",
  "next.resendOther": "{lead}: envie de novo as outras linhas que falharam ou ficaram em dúvida: {command}",
  "next.planAgain":
    "{lead}: as linhas em conflito não batem mais com o plano (veja _error); planeje de novo: {command}",
  "next.mergeLeft":
    "{lead}: as linhas ainda em conflito mudaram no servidor nos mesmos campos do arquivo (veja _error): envie os",
  "next.mergeLeftHow": "      valores do arquivo com {command} --only conflict --overwrite, ou corrija-os com --fixed",
  "next.overwriteLeft":
    "{lead}: as linhas ainda em conflito não podem ser gravadas como estão (veja _error); corrija-as numa cópia de",
  "next.overwriteLeftHow": "      {report} (mantenha _row): {command} --only conflict --fixed CORRIGIDO.csv",
  "next.conflict":
    "{lead}: registros alterados no servidor desde a exportação estão em conflito (veja _error); mantenha as mudanças do servidor",
  "next.conflictHow":
    "      em outros campos com {command} --only conflict --merge, ou envie os valores do arquivo: --overwrite",
  "progress.rowsRead": "{rows} linhas lidas",
  "progress.shareOf": "~{percent}% de {size}",
  "progress.rows": "{done}/{total} linhas",
  "progress.loggingIn": "fazendo login",
  "progress.paused": "em pausa após um limite de taxa, retoma às {time}",
  "progress.waitingBudget": "aguardando o limite de requisições",
  "progress.perMinute": "{now} de {limit} req/min",
  "progress.eta": "faltam ~{time}",
  "report.dryRun": "simulação",
  "report.dryRunBanner": "Simulação (dry run): um ensaio. Nada foi gravado na API; cada linha mostra o que receberia.",
  "report.wouldEndWell": "todas as linhas terminariam bem",
  "report.wouldNotEndWell": "algumas linhas não terminariam bem",
  "report.dryRunMode": " (simulação: nada foi gravado)",
  "report.xlsxDryRun": "SIMULAÇÃO (dry run): um ensaio, nada foi gravado",
  "report.exit0": "todas as linhas terminaram bem",
  "report.exit1": "ao menos uma linha não terminou bem",
  "report.exit2": "uso incorreto ou entrada ilegível: nada foi enviado",
  "report.exit3": "a execução foi interrompida: `fsm-bulk resume` a continua",
  "report.exit": "saída {code}: {meaning}",
  "report.run": "Execução",
  "report.rowsByStatus": "Linhas por status",
  "report.rowsByPlannedStatus": "Linhas por status planejado",
  "report.errorsByKind": "Erros por tipo",
  "report.steps": "Passos",
  "report.wouldChange": "O que mudaria",
  "report.columnPlan": "Plano das colunas",
  "report.sendsAgainstBudget": "Envios frente ao limite de requisições",
  "report.howLong": "Quanto tempo as linhas levaram",
  "report.attemptsPerRow": "Tentativas por linha",
  "report.slowestRows": "Linhas mais lentas",
  "report.earlierAttempts": "O que as tentativas anteriores encontraram",
  "report.settings": "Configurações",
  "report.label.command": "comando",
  "report.label.resource": "recurso",
  "report.label.mode": "modo",
  "report.label.dryRun": "simulação",
  "report.label.source": "origem",
  "report.label.target": "destino",
  "report.label.runDir": "pasta da execução",
  "report.label.rerunOf": "reexecução de",
  "report.label.baseUrl": "URL base",
  "report.label.started": "início",
  "report.label.finished": "fim",
  "report.label.duration": "duração",
  "report.label.rows": "linhas",
  "report.label.total": "total de linhas",
  "report.label.requests": "requisições",
  "report.label.retries": "novas tentativas",
  "report.label.rateLimitAnswers": "respostas de limite de taxa",
  "report.label.rateLimited": "limitadas (429)",
  "report.label.interrupted": "interrompida",
  "report.label.budget": "limite",
  "report.label.requestBudget": "limite de requisições",
  "report.label.dateFormat": "formato de data",
  "report.label.decimalMark": "separador decimal",
  "report.label.version": "versão",
  "report.label.exitCode": "código de saída",
  "report.label.aborted": "interrompida por",
  "report.label.appliedPlan": "plano aplicado",
  "report.label.approvedBy": "aprovado por",
  "report.budget": "{limit} requisições a cada {window}",
  "report.embeddedSandbox": "o sandbox embutido",
  "report.notFinished": "não terminou",
  "report.notGiven": "não informado",
  "report.yes": "sim",
  "report.no": "não",
  "report.comma": "vírgula (,)",
  "report.point": "ponto (.)",
  "report.noRows": "Nenhuma linha.",
  "report.noErrors": "nenhum erro",
  "report.noRowError": "Nenhuma linha tem erro.",
  "report.noRowSent": "Nenhuma linha foi enviada.",
  "report.noRequestSent": "Esta execução não enviou nenhuma requisição.",
  "report.noRowWouldChange": "Nenhuma linha mudaria um registro.",
  "report.aNewRecord": "um registro novo",
  "report.unwellOne":
    "{rows} linha não terminou bem ({statuses}), e nenhuma mensagem foi guardada para ela aqui: veja {where}.",
  "report.unwellMany":
    "{rows} linhas não terminaram bem ({statuses}), e nenhuma mensagem foi guardada para elas aqui: veja {where}.",
  "report.eachStepPage": "a página de cada passo",
  "report.rowExample": "linha {row}: {error}",
  "report.errorsHeadings": "linhas|erro (sem os valores)|exemplos",
  "report.exampleHeadings": "exemplo (primeira linha)|linhas",
  "report.stepsHeadings": "passo|linhas|como terminaram|requisições|saída|relatório",
  "report.report": "relatório",
  "report.slowestHeadings": "linha|levou|status|HTTP|tentativas|X-Request-Id",
  "report.attemptsHeadings": "tentativas|linhas",
  "report.outcomeHeadings": "resultado|vezes",
  "report.wouldChangeHeadings": "linha|ficaria|registro|campos: como lidos → como enviados",
  "report.plan": "O plano",
  "report.planWritten":
    "Esta simulação gravou o plano {file}, sha256 {sha}: o que o aprovador assina, e tudo o que `fsm-bulk apply` envia.",
  "report.planApplied": "Esta execução aplicou o plano {file}, sha256 {sha}, feito contra {target}.",
  "report.planApprover": "Aprovado por {name}.",
  "report.planNoApprover": "Nenhum aprovador foi informado (`--approved-by`).",
  "report.planSigner": "Assinado pela chave {keyId}{trusted}.",
  "report.planTrusted": ", a chave dada com --public-key",
  "report.planMissing":
    "O arquivo do plano {file} não está mais lá: seus passos e linhas não são mostrados (os da execução estão abaixo).",
  "report.planChanged":
    "O arquivo do plano {file} mudou desde então (seu sha256 agora é {sha}): seus passos e linhas não são mostrados (os da execução estão abaixo).",
  "report.planStepsHeadings": "passo|linhas|planejado|aplicado|relatório",
  "report.planRowsHeadings": "passo|linha|planejado|escrita|chave, registro|campos: como lidos → como enviados",
  "report.planRef": "{field} → o registro que a linha {row} de {resource} cria",
  "report.planNoWrite": "Nenhuma linha do plano envia uma escrita.",
  "report.planFirstOf":
    "As primeiras {shown} das {total} linhas do plano que enviam uma escrita; `fsm-bulk plan show {file} --all` lista todas.",
  "report.latencyNote":
    "Do momento em que a gravação da linha foi anunciada no diário até o resultado: incluídas as esperas pelo limite de requisições e as novas tentativas.",
  "report.firstOf": "As primeiras {shown} de {total} linhas; report.csv lista as mudanças de cada linha.",
  "report.moreKinds": "Mais {count} tipos: veja report.csv.",
  "report.footer":
    "Escrito pelo fsm-bulk a partir de {dir}/summary.json e journal.ndjson. report.csv e report.xlsx têm todas as linhas.",
  "onboard.stopping": "parando depois das linhas em andamento do passo atual",
  "onboard.stopHint":
    "continue com `{command}` (os passos que terminaram são mantidos, o passo em andamento continua do seu diário, os demais são executados)",
  "onboard.plan": "onboard {path}: {count} passos em ordem de dependência{dry}",
  "onboard.planOne": "onboard {path}: {count} passo em ordem de dependência{dry}",
  "onboard.planDryRun": " (simulação: nada será gravado)",
  "onboard.firstStep": "{resource} ({rows} linhas)",
  "onboard.firstStepOne": "{resource} ({rows} linha)",
  "onboard.notRead": "não lidas (anotações): {sheets}",
  "onboard.fixInvalid": "{lead}: corrija as linhas inválidas numa cópia de {report} (mantenha _row), depois",
  "onboard.missingRefsFix": "      {command} --only failed, ou corrija a referência (mantenha _row):",
  "onboard.then": "depois",
  "onboard.skippedForParent": "{lead}: as linhas puladas por causa da linha pai: {command}",
  "onboard.heading": "onboard: {rows} linhas em {steps} de {total} passos, {took}{dry}",
  "onboard.closingDryRun": " (simulação: nada foi gravado; os status são o que as linhas receberiam)",
  "onboard.notStarted": "não iniciados: {steps}; {hint}",
  "onboard.seeReports": "o {csv} de cada passo, ou {page}",
  "onboard.rowsToLookAt": "linhas a conferir: {file}",
  "onboard.reports": "relatórios: {dir}/<recurso>/{csv} (e report.xlsx), um por passo",
  "onboard.summary": "resumo: {file}",
  "onboard.wouldSend": "enviaria {count} (não comparadas)",
  "onboard.skippedParent": "skipped {count} (a linha pai não terminou bem)",
  "onboard.noRows": "nenhuma linha",
  "onboard.rows": "{rows} linhas",
  "onboard.rowOne": "{rows} linha",
  "onboard.stopped": " (interrompido)",
  "template.text": "texto",
  "template.textMax": "texto (no máximo {max} caracteres)",
  "template.wholeNumber": "número inteiro{range}",
  "template.number": "número{range}; separador decimal \".\" ou \",\"",
  "template.rangeFromTo": " de {min} a {max}",
  "template.rangeAtLeast": " de no mínimo {min}",
  "template.rangeUpTo": " até {max}",
  "template.boolean": "true ou false (também {spellings})",
  "template.booleanSpellings": "sim/não, yes/no, 1/0; x quer dizer sim",
  "template.date":
    "data: aaaa-mm-dd, ou aaaa-mm-ddThh:mm:ss com hora (dd/mm/aaaa também é lido; uma célula de data do Excel também serve)",
  "template.time": "horário: hh:mm:ss",
  "template.email": "endereço de e-mail",
  "template.cpfCnpj": "CPF (11 dígitos) ou CNPJ (14 dígitos); pontos, traços e barra são aceitos",
  "template.guid": "GUID, como 3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "template.enum": "um dos números da lista",
  "template.json": "JSON",
  "template.file": "caminho de um arquivo local, relativo a este arquivo",
  "template.byName": "um dos nomes da lista",
  "template.aList": " (uma lista)",
  "template.apiCode": "código {code} na API",
  "template.required": "Obrigatório ao criar um registro",
  "template.requiredEither": "Obrigatório ao criar um registro: preencha esta coluna ou {column}",
  "template.optional": "Opcional",
  "template.jsonListSyntax": "uma lista JSON de objetos com as chaves {keys}: [{sample}]",
  "template.jsonObjectSyntax": "um objeto JSON com as chaves {keys}",
  "template.listSyntax": "uma lista: separe os itens com {separator} (por exemplo {example})",
  "template.several": "; vários: separe-os com {separator}",
  "template.refByKey": "indica o registro de {target} pelo seu {key}{several}; preencha esta coluna ou {column}",
  "template.refById": "o id no servidor do registro de {target}{several}; ou indique-o pelo seu {key} em {column}",
  "template.refDescription": "{description}, por {key}",
  "template.noteType": "Tipo: {type}",
  "template.noteValues": "Valores: {values}",
  "template.noteCell": "Célula: {syntax}",
  "template.noteExample": "Exemplo: {example}",
  "template.alsoBoolean": "Também aceita: {spellings}.",
  "template.alsoEnum": "Também aceita: o número, ou o nome em português.",
  "template.usualValues": "Valores usuais: {values}. {also} Qualquer outro valor é apontado pelo fsm-bulk validate.",
  "template.fillSheet":
    "Preencha a planilha {sheet}: um registro por linha, abaixo do cabeçalho. A linha 2 é um exemplo: substitua-a ou apague-a (se ficar como está, é apontada, não importada).",
  "template.leaveEmpty":
    "Deixe a célula vazia quando não tiver o valor. Os nomes das colunas devem ficar como estão; colunas de que você não precisa podem ser apagadas.",
  "template.orange":
    "Cabeçalhos em laranja são obrigatórios ao criar um registro (laranja-claro: preencha a coluna do id ou a coluna que indica o registro).",
  "template.lists":
    "Listas vão numa só célula, separadas por {separator}. Uma referência a outro registro é dada pelo id, ou pela chave na coluna ao lado.",
  "template.importWith": "Importe com: {command}   (confira antes com: {check})",
  "template.headings": "Coluna|Obrigatória|Tipo|Descrição|Valores|Como escrever a célula|Exemplo",
  "workbook.title": "Pasta de trabalho de implantação",
  "workbook.order":
    "Uma planilha por recurso, na ordem em que são carregados: primeiro os pais, depois as linhas que os citam.",
  "workbook.fill1":
    "Preencha as planilhas de que precisa, um registro por linha abaixo do cabeçalho; deixe as outras vazias (uma planilha sem linhas",
  "workbook.fill2":
    "não carrega nada). Os nomes das colunas devem ficar como estão; colunas de que você não precisa podem ser apagadas.",
  "workbook.notes":
    "Cada célula de cabeçalho tem uma nota: o que a coluna guarda, se é obrigatória, os valores aceitos, um exemplo.",
  "workbook.orange":
    "Cabeçalhos em laranja são obrigatórios ao criar um registro (laranja-claro: preencha a coluna do id ou a da chave).",
  "workbook.names":
    "Uma linha cita registros de planilhas anteriores pela chave (customerExternalId, userToLogin …). Listas: separe com {separator}.",
  "workbook.notRead": "Este README e as planilhas cujo nome começa com _ não são lidos: guarde suas anotações ali.",
  "workbook.dryRun": "Veja o plano sem gravar nada: {command}",
  "workbook.then": "Depois: {command}",
  "workbook.headings": "Passo|Planilha|Recurso|Cita registros de",
  "chart.budget": "limite: {limit} a cada {window}",
  "chart.offScale": "↑ limite {limit} a cada {window}",
  "chart.offScaleNote":
    " Um limite marcado com ↑ está muito acima do que foi enviado (no máximo {peak} numa janela): a escala segue os envios.",
  "chart.label": "envios por janela",
  "chart.barTitle": "{time}: {count} enviados nos últimos {window}",
  "chart.limitedTitle": "{count} respondidos com limite de requisições",
  "chart.caption":
    "Cada barra: as tentativas de gravação das linhas (novas tentativas incluídas) enviadas na janela do limite antes daquele momento, contadas quando cada linha terminou; no máximo {peak}.",
  "chart.sessions": " A execução teve várias sessões (resume): cada uma é desenhada contra o seu próprio limite.",
  "chart.notInBars":
    " Consultas, logins e páginas de listas também usam o limite, mas não estão nas barras; o total da execução está em Execução.",
  "chart.red": " Vermelho: tentativas respondidas com limite de requisições.",
  "onboard.emptySheets": "{count} planilhas sem linhas, não importadas: {names}",
  "onboard.emptySheet": "1 planilha sem linhas, não importada: {names}",
  "onboard.emptyFiles": "{count} arquivos sem linhas, não importados: {names}",
  "onboard.emptyFile": "1 arquivo sem linhas, não importado: {names}",
  "onboard.readOnlySheets": "{count} planilhas de listas somente leitura, não importadas (a API não as grava): {names}",
  "onboard.readOnlySheet": "1 planilha de listas somente leitura, não importada (a API não a grava): {names}",
  "onboard.readOnlyFiles": "{count} arquivos de listas somente leitura, não importados (a API não os grava): {names}",
  "onboard.readOnlyFile": "1 arquivo de listas somente leitura, não importado (a API não o grava): {names}",
  "report.mappingRead": "Lido pelo perfil de mapeamento {file} (sha256 {sha}), cabeçalho na linha {row}.",
  "report.planHeadings": "coluna de origem|campo|como",
  "report.notSent": "não enviada",
  "report.withValueMap": ", com um mapa de valores",
  "report.skippedRows": "Linhas ignoradas por não serem dados ({count}): {rows}.",
  "report.skippedRow": "linha {row} ({why})",
  "report.notWritten": "fsm-bulk: não foi possível gravar {file} ({problem}); `{command}` o grava de novo",
  "stop.writeFailed":
    "{problem}; a execução parou depois de {count} requisições: o que foi enviado está no diário, continue com `{command}` depois de corrigir isso",
  "stop.writeFailedOne":
    "{problem}; a execução parou depois de 1 requisição: o que foi enviado está no diário, continue com `{command}` depois de corrigir isso",
  "columns.hidden":
    "{file}: a coluna {column} está oculta na planilha; ignorada, seus valores não são enviados (reexiba-a ou use --include-hidden)",
  "columns.retired": "{file}: a coluna {column} não é mais usada ({why}); seus valores são ignorados",
  "columns.twice": "as colunas {first} e {second} dão ambas {field}; mantenha só uma",
  "columns.hiddenHint": " (a coluna {column} está oculta na planilha: reexiba-a ou use --include-hidden)",
  "columns.misspelling": " (a coluna {column} seria {name} escrito errado?)",
  "columns.or": " ou ",
  "columns.createInstead": ", ou importe o arquivo com --mode create para criar cada linha como um registro novo",
  "columns.noIdentity":
    "registros de {resource} não têm id nem chave, então as linhas não podem ser ligadas a registros para {mode}",
  "columns.misspeltKey":
    "{column} não é uma coluna de {resource}: quis dizer {name}? {mode} acha cada registro por {columns}, então esta coluna deve ser escrita exatamente assim; renomeie-a{instead}",
  "columns.noKeyUpsert":
    "registros de {resource} não têm chave, então o upsert os acha por {columns} (linhas com ela vazia são criadas) e o arquivo não tem essa coluna{hint}; para criar cada linha como um registro novo, importe o arquivo com --mode create ou dê a ele uma coluna {first} vazia",
  "columns.needsRecord": "{mode} precisa de uma coluna para achar cada registro: {columns}{hint}{why}{instead}",
  "columns.upsertWhy": "; sem ela, cada importação do arquivo criaria as linhas de novo",
  "columns.addColumn": "; acrescente a coluna{instead}",
  "columns.needsParent": "{mode} precisa da coluna do registro pai: {columns}{hint}",
  "cell.errorValueText":
    "o valor de erro {code}, não um dado (uma planilha salvou o erro como texto): corrija a célula na planilha",
  "cell.errorValue": "o valor de erro {code}, não um dado: corrija a célula na planilha",
  "cell.formulaError":
    "uma fórmula cujo resultado salvo é o erro {code}: corrija a fórmula (ou as células que ela usa) na planilha, ou troque-a por um valor",
  "cell.unreadable": "uma célula cujo conteúdo não pode ser lido ({value})",
  "cell.tooLongExcel": "{length} caracteres: uma célula comporta no máximo {max} (o limite do Excel)",
  "row.hidden":
    "não importada: a linha {row} está oculta na planilha (ocultada à mão, ou filtrada por um filtro); para importá-la, reexiba-a ou use --include-hidden",
  "row.beyondHeader": "(além da última coluna)",
  "row.ragged":
    "{count} valores além das {width} colunas do cabeçalho ({shown}); um valor pode conter um delimitador sem aspas",
  "row.raggedOne":
    "1 valor além das {width} colunas do cabeçalho ({shown}); um valor pode conter um delimitador sem aspas",
  "row.formerCode":
    "{column}: {value} é o código antigo desta ferramenta para {label}, enviado como o {code} da API; escreva o nome {label}",
  "row.unknownProperty": "{column}: {name} não é uma propriedade conhecida ({known}); enviada como está",
  "row.example": "esta é a linha de exemplo do modelo; apague-a (ou troque os valores pelos seus)",
  "cell.formulaNoResult":
    "uma fórmula sem resultado salvo (o programa que gravou o arquivo não calcula fórmulas): abra o arquivo no Excel e salve de novo",
  "attachment.outside":
    "{file} está fora da pasta de anexos {root}: os anexos devem estar dentro da pasta do arquivo de entrada (--attachments-root DIR indica outra pasta)",
  "attachment.linkOutside":
    "{file} leva para fora da pasta de anexos {root} (é um link para {real}): os anexos devem estar dentro da pasta do arquivo de entrada (--attachments-root DIR indica outra pasta)",
  "attachment.system":
    "{file} é um arquivo do sistema ({real}), não um documento: arquivos em {folder} nunca são anexados",
  "attachment.pseudo": "{file} é um arquivo do sistema ({real} está em {fs}), não um documento",
  "attachment.notFile": "{file} é {kind}, não um arquivo",
  "attachment.rootUnreadable": "{file} não pode ser verificado: a pasta de anexos {root} não pode ser lida ({code})",
  "attachment.notFound": "{file} não encontrado (procurado em {path})",
  "attachment.unreadable": "{file} não pode ser lido ({code})",
  "attachment.tooLarge": "{file} tem {size}; os anexos são limitados a {max}",
  "attachment.aFolder": "uma pasta",
  "attachment.aPipe": "um pipe nomeado",
  "attachment.aSocket": "um socket",
  "attachment.aDevice": "um dispositivo",
  "attachment.somethingElse": "algo que não é um arquivo",
  "attachment.nowLink": "agora é um link ({real}), não o arquivo que foi verificado",
  "attachment.nowOther": "agora é {kind} ({real}), não um arquivo",
  "attachment.nowLeads": "agora leva a {again}, não ao arquivo que foi verificado ({real})",
  "attachment.grew": "{path} agora é maior que {max}; os anexos são limitados a {max}",
  "mapping.otherResource": "o perfil é de {profile}, não de {resource}",
  "mapping.headerRowMissing":
    "headerRow {row} (em {profile}) está em branco ou não está entre as primeiras {count} linhas",
  "mapping.notAColumn": "{property}: \"{name}\" não é uma coluna de {resource} (uma destas: {columns})",
  "mapping.noSourceColumn":
    "{property}: o arquivo {file} não tem a coluna \"{name}\" (seu cabeçalho, linha {row}: {header})",
  "mapping.givenTwice": "{property}: {field} aparece duas vezes (em {first} e em {second}); mantenha só uma",
  "mapping.byColumn": "coluna \"{name}\"",
  "mapping.aboveHeader": "acima do cabeçalho",
  "mapping.beyondHeader": "nenhum valor sob as colunas do cabeçalho",
  "mapping.notData": "não são dados: \"{text}\"",
  "mapping.cannotRead": "não foi possível ler o perfil de mapeamento ({code})",
  "mapping.invalid": "não é um perfil de mapeamento válido: {detail}",
  "mapping.changedSincePlan":
    "{file}: o perfil de mapeamento mudou desde que o plano {plan} foi feito: nada foi enviado; faça um novo plano",
  "mapping.readWith": "mapeamento {file} (sha256 {sha}…): cabeçalho na linha {row}",
  "mapping.ignored": "(ignorada, não enviada)",
  "mapping.how.same name": "mesmo nome",
  "mapping.how.renamed": "renomeada",
  "mapping.how.composed": "composta",
  "mapping.how.constant": "constante",
  "mapping.how.sent as given": "enviada como está",
  "mapping.how.ignored": "ignorada",
  "mapping.how.tool column": "coluna da ferramenta",
  "mapping.withValueMap": " com um mapa de valores",
  "mapping.why.columnName": "nome da coluna",
  "mapping.why.label": "o rótulo do campo",
  "mapping.why.header": "cabeçalho \"{name}\"",
  "mapping.why.values": "os valores parecem {shape}",
  "mapping.why.none": "nenhum campo corresponde",
  "mapping.shape.CPF/CNPJ": "CPF/CNPJ",
  "mapping.shape.e-mail": "e-mail",
  "mapping.shape.phone": "telefone",
  "mapping.shape.date": "data",
  "mapping.shape.latitude": "latitude",
  "mapping.shape.longitude": "longitude",
  "mapping.shape.yes/no": "sim/não",
  "mapping.sure.high": "alta",
  "mapping.sure.medium": "média",
  "mapping.sure.low": "baixa",
  "mapping.sure.-": "-",
  "mapping.tableHeadings": "coluna de origem|→ campo|por quê|certeza|valores de exemplo",
  "mapping.keyFromDocument":
    "{key}: nenhuma coluna de chave; proposta a partir de \"{source}\" (o CPF/CNPJ de cada registro): revise-a",
  "mapping.noKey": "{key}: nenhuma coluna de chave; o upsert precisa de uma (ou importe com --mode create)",
  "mapping.headerFound": "{resource} de {file}{sheet}: cabeçalho na linha {row}{above}",
  "mapping.inSheet": " (planilha \"{sheet}\")",
  "mapping.aboveNotRead": " ({count} linhas acima dele não lidas)",
  "mapping.aboveNotReadOne": " (1 linha acima dele não lida)",
  "mapping.missing": "obrigatórios para create/upsert e não mapeados: {fields}",
  "mapping.note": "nota: {note}",
  "mapping.valuesOf": "valores de \"{source}\" → {field} ({count} distintos):",
  "mapping.needsValueMap": "precisa de um mapa de valores",
  "mapping.nameToLookUp": "(um nome a procurar)",
  "mapping.wrote": "gravado {file}: revise-o, depois: {command}",
  "mapping.writeIt": "grave-o com --out ARQUIVO.json, revise-o, depois: {command}",
  "header.readFrom": "o cabeçalho foi lido da linha {row}{sheet}; as primeiras linhas:",
  "header.ofSheet": " da planilha \"{sheet}\"",
  "header.row": "linha {row}: {text}",
  "header.blank": "(em branco)",
  "header.likely":
    "a linha {row} parece ser o cabeçalho (um título acima da tabela?): {command} propõe um perfil de mapeamento que o lê ali; depois valide ou importe com --map PERFIL"
}

/** The catalogues, for the tests that compare them. */
export const catalogues: { readonly [L in Language]: { readonly [K in MessageKey]: string } } = { en, "pt-BR": ptBR }

let current: Language = "en"

/** The language messages are written in from now on (the edge sets it once; tests set it around a case). */
export const setLanguage = (language: Language): void => {
  current = language
}

export const currentLanguage = (): Language => current

/** `pt-BR`, `pt_BR.UTF-8`, `pt`, `PT-br` → pt-BR; `en…`, `C`, `POSIX` → en; anything else undefined. */
export const languageOf = (given: string | undefined): Language | undefined => {
  if (given === undefined) return undefined
  const tag = given.trim().split(/[.@]/)[0]!.replace("_", "-").toLowerCase()
  if (tag === "pt" || tag.startsWith("pt-")) return "pt-BR"
  if (tag === "en" || tag.startsWith("en-") || tag === "c" || tag === "posix") return "en"
  return undefined
}

/**
 * The language the environment asks for: `FSM_LANG` first (this tool only), then the POSIX order `LC_ALL`,
 * `LC_MESSAGES`, `LANG`; the first one set decides (a set `LC_ALL=C` means English even under `LANG=pt_BR`).
 */
export const languageFromEnvironment = (env: Readonly<Record<string, string | undefined>>): Language => {
  const own = languageOf(env.FSM_LANG)
  if (own !== undefined) return own
  for (const name of ["LC_ALL", "LC_MESSAGES", "LANG"]) {
    const value = env[name]
    if (value !== undefined && value !== "") return languageOf(value) ?? "en"
  }
  return "en"
}

/** A message of the catalogue in the current language, its `{placeholders}` filled. */
export const t = <K extends MessageKey>(key: K, ...params: Params<K>): string => {
  const text = catalogues[current][key]
  const values = params[0] as Readonly<Record<string, string | number>> | undefined
  return values === undefined
    ? text
    : text.replace(/\{([A-Za-z]+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))
}

/**
 * How a column of a mapping profile's plan went (`composed`, `sent as given`: the plan's `how`, kept in English in
 * summary.json), in the reader's language; a word this version does not know is shown as it is.
 */
export const howMapped = (how: string): string => {
  const key = `mapping.how.${how}`
  return key in en ? catalogues[current][key as MessageKey] : how
}

/** Names of a kind of sheet (file) of an onboarding, with their count: `26 sheets with no rows, not imported: …`. */
export const countedSheets = (
  what: "empty" | "readOnly",
  names: ReadonlyArray<string>,
  kind: "workbook" | "directory"
): string => {
  const one = names.length === 1
  const key = what === "empty"
    ? kind === "workbook"
      ? one ? "onboard.emptySheet" : "onboard.emptySheets"
      : one
      ? "onboard.emptyFile"
      : "onboard.emptyFiles"
    : kind === "workbook"
    ? one ? "onboard.readOnlySheet" : "onboard.readOnlySheets"
    : one
    ? "onboard.readOnlyFile"
    : "onboard.readOnlyFiles"
  return t(key, { count: names.length, names: names.join(", ") })
}
