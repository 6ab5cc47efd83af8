/**
 * Finding and redacting personal data and secrets in text: stored bodies are redacted with it, and the
 * security scan counts what it finds.
 * The rules are data: a kind, a pattern, and for card numbers a Luhn check that keeps ordinary long
 * numbers (timestamps, ids) out. Values are replaced by `[redacted:<kind>]`; nothing found is ever
 * logged or returned, only counted.
 */
export const PII_KINDS = ['email', 'phone', 'card', 'secret'] as const
export type PiiKind = (typeof PII_KINDS)[number]

interface Rule {
  kind: PiiKind
  pattern: RegExp
  accept?: (match: string) => boolean
  /**
   * A character every match contains. Text without it is not searched with the pattern: finding a
   * character is a fraction of what the pattern costs, and the writer thread scans every stored body.
   */
  needs?: string
}

function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

// Secrets first: a key may contain what looks like a phone number or an email's characters.
const RULES: readonly Rule[] = [
  {
    kind: 'secret',
    pattern:
      /\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|gw-(?:sk|ses|inv)-[A-Za-z0-9]{12}_[A-Za-z0-9]{40}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|xox[abpr]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,})/g,
  },
  // Bounded as addresses are (64 before the @, 253 after): unbounded, a long run of letters with an @
  // near it cost the writer thread time quadratic in its length (0.7 s for 64 KB, 1.2 s of dots).
  { kind: 'email', pattern: /[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}/g, needs: '@' },
  {
    kind: 'card',
    // 13 to 19 digits, a space or dash allowed between two. Written digit-first: the same matches as
    // `(?:\d[ -]?){12,18}\d`, which the regexp engine runs seven times slower (bench/log-writer.ts).
    pattern: /\b\d(?:[ -]?\d){12,18}\b/g,
    accept: (m) => {
      const digits = m.replace(/[ -]/g, '')
      return digits.length >= 13 && digits.length <= 19 && luhn(digits)
    },
  },
  // A phone number needs a leading + or at least two separators, so that plain numbers are left alone.
  {
    kind: 'phone',
    pattern: /(?:\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}|\(?\d{2,4}\)?[\s.-]\d{3,4}[\s.-]\d{3,4})\b/g,
  },
]

export interface Redaction {
  text: string
  counts: Partial<Record<PiiKind, number>>
}

export function redactPii(text: string): Redaction {
  const counts: Partial<Record<PiiKind, number>> = {}
  let out = text
  for (const rule of RULES) {
    if (rule.needs !== undefined && !out.includes(rule.needs)) continue
    out = out.replace(rule.pattern, (match) => {
      if (rule.accept && !rule.accept(match)) return match
      counts[rule.kind] = (counts[rule.kind] ?? 0) + 1
      return `[redacted:${rule.kind}]`
    })
  }
  return { text: out, counts }
}
