import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from '../util/random'

/**
 * The server secret keys every credential hash (and later the vault). From `GW_SECRET` when set;
 * otherwise generated once into `<dataDir>/secret` with mode 0600 and read from there afterwards.
 */
export function loadServerSecret(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined) return configured
  const path = join(dataDir, 'secret')
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true })
    try {
      // `wx`: never overwrite a secret another process wrote a moment ago; every hash depends on it.
      writeFileSync(path, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' })
      chmodSync(path, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  const stored = readFileSync(path, 'utf8').trim()
  if (stored.length < 32) throw new Error(`${path} holds a secret shorter than 32 characters`)
  return stored
}

/** Replaces the generated secret file (after a rotation), atomically: a crash leaves the old or the new, never half. */
export function replaceSecretFile(dataDir: string, secret: string): string {
  const path = join(dataDir, 'secret')
  const next = `${path}.next`
  writeFileSync(next, `${secret}\n`, { mode: 0o600 })
  renameSync(next, path)
  return path
}

export const newServerSecret = (): string => randomBytes(32).toString('base64url')
