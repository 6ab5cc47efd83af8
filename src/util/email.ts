/**
 * What an email address is, for every place one comes in (the CLI, invites and members, sign-in) and
 * for the domains of single sign-on. The rule is the WHATWG HTML "valid e-mail address", the one a
 * browser's `<input type="email">` applies: an address the console's own field refuses would leave a
 * person who can never sign in. On top of it, SMTP's bounds (RFC 5321): 64 characters before the `@`,
 * 254 in all, past which no mail reaches the address.
 */

/** One label of a domain name: letters, digits and inner hyphens, at most 63 characters. */
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?'

export const EMAIL_MAX_LENGTH = 254
/** A JSON Schema pattern (no lookarounds, so other validators read it too); the length is checked apart. */
export const EMAIL_PATTERN = `^[a-zA-Z0-9.!#$%&'*+/=?^_\`{|}~-]{1,64}@${LABEL}(?:\\.${LABEL})*$`
export const EMAIL_RULE = `an email address such as name@example.com (what a browser's email field accepts), at most ${EMAIL_MAX_LENGTH} characters`

export const DOMAIN_MAX_LENGTH = 253
/**
 * A domain name as the part of an address after the `@` is one, with at least two labels: a domain
 * of single sign-on is proved by a DNS record published under it, which a bare `localhost` cannot hold.
 */
export const DOMAIN_PATTERN = `^${LABEL}(?:\\.${LABEL})+$`
export const DOMAIN_RULE = `a DNS name such as example.com (labels of letters, digits and inner hyphens), at most ${DOMAIN_MAX_LENGTH} characters`

const EMAIL = new RegExp(EMAIL_PATTERN)

/** Why `value` is not an email address gw takes, naming it; undefined when it is one. */
export function emailProblem(value: string): string | undefined {
  if (value.length <= EMAIL_MAX_LENGTH && EMAIL.test(value)) return undefined
  const shown =
    value.length > 80 ? `${JSON.stringify(value.slice(0, 80))}... (${value.length} characters)` : JSON.stringify(value)
  return `${shown} is not ${EMAIL_RULE}`
}
