import { maskSecret } from '../../auth/vault'
import { PROVIDERS_TABLE, type ProviderKind, type ProviderName } from '../../directory/providers'
import { readServiceAccount } from '../../directory/service-account'
import { badRequest } from '../../errors'
import type { ConnectionSettings } from '../../store/json-columns'

/** The settings each kind of provider reads; another sent with a key is the caller's mistake, named. */
const SETTINGS_OF: Record<ProviderKind, ReadonlyArray<keyof ConnectionSettings>> = {
  'openai-compatible': ['models'],
  anthropic: ['models'],
  gemini: ['models'],
  azure: ['apiVersion', 'models'],
  bedrock: ['region', 'accessKeyId', 'models'],
  vertex: ['project', 'location', 'models'],
}

const SETTING_NAMES: ReadonlyArray<keyof ConnectionSettings> = [
  'region',
  'accessKeyId',
  'apiVersion',
  'project',
  'location',
  'models',
]

/** The settings a request names: those present, as given. */
export function settingsIn(input: Partial<ConnectionSettings>): ConnectionSettings {
  return Object.fromEntries(SETTING_NAMES.flatMap((name) => (input[name] === undefined ? [] : [[name, input[name]]])))
}

/** A key as it will be stored: the provider's, its address, its secret and its settings, merged from what changed. */
export interface KeyShape {
  provider: ProviderName
  baseUrl: string | null
  secret: string | undefined
  settings: ConnectionSettings
}

/**
 * Checks a key against what its provider needs, and answers the hint reads show of its secret. A
 * Bedrock key needs its access key id and region (its secret is the secret access key); an Azure key
 * its resource's endpoint as `baseUrl`; a Vertex key is a service account's JSON key file, whose
 * project serves unless one is named. Nothing is stored when a rule is broken.
 */
export function checkKey({ provider, baseUrl, secret, settings }: KeyShape): { hint?: string } {
  const kind = PROVIDERS_TABLE[provider].kind
  const foreign = SETTING_NAMES.filter((name) => settings[name] !== undefined && !SETTINGS_OF[kind].includes(name))
  if (foreign.length > 0)
    throw badRequest(`${foreign.join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not taken by a ${provider} key`)
  if (kind === 'azure' && baseUrl === null)
    throw badRequest("an azure key needs baseUrl: the resource's endpoint, such as https://<resource>.openai.azure.com")
  if (kind === 'bedrock' && (settings.region === undefined || settings.accessKeyId === undefined))
    throw badRequest('a bedrock key needs region and accessKeyId; its secret is the secret access key')
  if (kind !== 'vertex' || secret === undefined) return secret === undefined ? {} : { hint: maskSecret(secret) }
  const account = readServiceAccount(secret)
  if (typeof account === 'string') throw badRequest(`a vertex key's secret must be a service account's JSON key file: ${account}`)
  if (settings.project === undefined && account.projectId === undefined)
    throw badRequest('a vertex key needs project: its service account names none')
  // The account's address is no secret, and says which account this is better than a masked key would.
  return { hint: account.clientEmail }
}
