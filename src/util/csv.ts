/**
 * RFC 4180 CSV, for the audit export and the console's request export: a field with a comma, a quote,
 * a CR or a LF is quoted and its quotes doubled. A field that a spreadsheet would read as a formula
 * (leading =, +, -, @, tab or CR) gets a leading apostrophe, so an export opened in a spreadsheet
 * cannot run what an attacker put in a name, a model or a property.
 */
export function csvField(value: string | number | null): string {
  if (value === null) return ''
  let text = String(value)
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const csvRow = (fields: ReadonlyArray<string | number | null>): string => `${fields.map(csvField).join(',')}\r\n`
