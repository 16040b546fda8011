/** The file name of the onboarding workbook `template --workbook` writes (named in help, so loaded by every command). */
export const workbookFileName = "onboarding.xlsx"
