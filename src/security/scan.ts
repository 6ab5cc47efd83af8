import { findInjections } from './injection'
import { redactPii } from './pii'

/** One thing the scan found in a request body: a kind of personal data or an injection rule, and how often. */
export interface Finding {
  kind: 'pii' | 'injection'
  category: string
  occurrences: number
}

/**
 * The text a caller wrote: every string of the JSON body (messages, system prompt, tool results),
 * so that field names and numbers cannot look like findings, and inline images (`data:` URLs) are
 * skipped. A body cut at the capture bound is not JSON any more and is scanned as it is.
 */
function writtenText(body: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body
  }
  const strings: string[] = []
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (!value.startsWith('data:')) strings.push(value)
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item)
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) walk(item)
    }
  }
  walk(parsed)
  return strings.join('\n')
}

/** The security scan of one request body (spec'd in docs/decisions.md, "Security views"): counts only, never the text. */
export function scanRequestBody(body: string): Finding[] {
  const text = writtenText(body)
  const findings: Finding[] = []
  for (const [category, occurrences] of Object.entries(redactPii(text).counts))
    findings.push({ kind: 'pii', category, occurrences })
  for (const [category, occurrences] of Object.entries(findInjections(text)))
    findings.push({ kind: 'injection', category, occurrences })
  return findings
}
