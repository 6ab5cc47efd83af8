import { Webhook } from 'standardwebhooks'
import { randomBytes } from '../util/random'

/**
 * Webhook signing by the Standard Webhooks specification: `webhook-id`, `webhook-timestamp` and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`, under a `whsec_` secret, so every
 * receiver verifies with its language's existing library. The timestamp is signed, so a captured
 * delivery replayed later fails the receiver's tolerance check; the id is the same across retries of
 * one event, so a receiver drops what it already has.
 */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`

/** What reads show of a signing secret: enough to tell two apart, never enough to sign. */
export const secretPrefix = (secret: string): string => `${secret.slice(0, 'whsec_'.length + 4)}…`

export function signedHeaders(secret: string, id: string, at: Date, payload: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, payload),
  }
}
