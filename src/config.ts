import { readFileSync } from 'node:fs'
import {
  type OperatorProviders,
  PROVIDERS_TABLE,
  type ProviderCredentials,
  type ProviderName,
  VENDOR_NAMES,
  type VendorName,
} from './directory/providers'
import { readServiceAccount } from './directory/service-account'
import { type AllowList, parseAllowList } from './egress/policy'
import { LOG_LEVELS, type LogLevel } from './log'
import { SAMPLERS, type SamplerName, type TracingConfig } from './observability/tracing'
import { MAX_RETENTION_DAYS } from './spend/retention'
import type { DatabaseLocation } from './store/database'

/** What a variable's text must be. (Plain checks: a schema library here was the only one start-up loaded.) */
type Rule = (text: string) => boolean
/** Compiled when first used: most rules are never consulted, their variable being unset. */
const matching = (pattern: string): Rule => {
  let expression: RegExp | undefined
  return (text) => {
    expression ??= new RegExp(pattern)
    return expression.test(text)
  }
}
const lengthIn =
  (min: number, max = Number.POSITIVE_INFINITY): Rule =>
  (text) =>
    text.length >= min && text.length <= max
const oneOf =
  (...words: readonly string[]): Rule =>
  (text) =>
    words.includes(text)

/**
 * The environment table of DESIGN.md section 4. Each variable is validated on its own so that a bad
 * value stops start-up with one line that names the variable and what it accepts.
 */
const PORT = matching('^[0-9]{1,5}$')
const URL_OF = (schemes: string) => matching(`^(${schemes})://.+`)
const SECONDS = matching('^[1-9][0-9]{0,8}$')
const MILLISECONDS = matching('^[0-9]{1,9}$')
const COUNT = matching('^[1-9][0-9]{0,6}$')
const BOOLEAN = oneOf('true', 'false')
const KEY = { accepts: lengthIn(1), allowed: 'a non-empty key' }
const API_VERSION = matching('^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$|^v1$|^preview$')
const REGION = matching('^[a-z]{2,}(-[a-z0-9]+)*$')
/** A model name callers use, `=`, the provider's own name for it. */
const ALIAS = '[A-Za-z0-9._:/-]{1,200}=[A-Za-z0-9._:/-]{1,200}'
const baseUrl = (provider: ProviderName): Variable => ({
  accepts: URL_OF('http|https'),
  allowed: `http://... or https://... (default: ${PROVIDERS_TABLE[provider].defaultBaseUrl})`,
})

/** An OpenAI-compatible vendor's two variables: it is on when its key is set. */
type VendorVariables = { [N in VendorName as `${Uppercase<N>}_API_KEY` | `${Uppercase<N>}_BASE_URL`]: Variable }
const VENDOR_VARIABLES = Object.fromEntries(
  VENDOR_NAMES.flatMap((name) => [
    [`${name.toUpperCase()}_API_KEY`, KEY],
    [`${name.toUpperCase()}_BASE_URL`, baseUrl(name)],
  ]),
) as VendorVariables

interface Variable {
  accepts: Rule
  allowed: string
  fallback?: string
}

const VARIABLES = {
  GW_HOST: { accepts: lengthIn(1), allowed: 'a host name or IP address', fallback: '127.0.0.1' },
  GW_PORT: { accepts: PORT, allowed: 'an integer port from 0 to 65535', fallback: '8787' },
  GW_DATA_DIR: { accepts: lengthIn(1), allowed: 'a directory path', fallback: './gw-data' },
  GW_DATABASE_URL: {
    accepts: matching('^(postgres|postgresql)://.+|^sqlite:.+'),
    allowed: 'postgres://... or postgresql://... or sqlite:<file path> (default: gw.db in GW_DATA_DIR)',
  },
  GW_REDIS_URL: { accepts: URL_OF('redis|rediss'), allowed: 'redis://... or rediss://...' },
  GW_CLICKHOUSE_URL: { accepts: URL_OF('http|https'), allowed: 'http://... or https://...' },
  GW_SECRET: {
    accepts: lengthIn(32),
    allowed: 'at least 32 characters (default: generated into GW_DATA_DIR/secret)',
  },
  GW_META_TTL_SECONDS: { accepts: SECONDS, allowed: 'a positive integer number of seconds', fallback: '300' },
  GW_REQUEST_RETENTION_DAYS: {
    accepts: matching('^[1-9][0-9]{0,3}$'),
    allowed: `a whole number of days from 1 to ${MAX_RETENTION_DAYS}: request records older than that are deleted (organisations may keep them for fewer days, never more); unset: kept forever`,
  },
  GW_GLOBAL_RATE_LIMIT: {
    accepts: matching('^[1-9][0-9]*/[1-9][0-9]*$'),
    allowed: '<requests>/<seconds>, both positive integers, e.g. 1000/60',
    fallback: '1000/60',
  },
  GW_UPSTREAM_TIMEOUT_SECONDS: {
    accepts: SECONDS,
    allowed: "a positive integer number of seconds to wait for a provider's response headers",
    fallback: '300',
  },
  GW_MAX_BODY_BYTES: {
    accepts: matching('^[1-9][0-9]{0,9}$'),
    allowed:
      'the largest request body a gateway call may send, in bytes (management routes take at most 1 MiB); gw holds at most four such bodies at once, and further calls wait their turn',
    fallback: String(32 * 1024 * 1024),
  },
  GW_CACHE_MAX_BYTES: {
    accepts: matching('^[1-9][0-9]{0,10}$'),
    allowed:
      'the bytes the in-process response cache may hold (least recently used answers go first); an answer larger than an eighth of it, or than 4 MiB, is not kept. Unused when GW_REDIS_URL is set: the cache is in Redis',
    fallback: String(64 * 1024 * 1024),
  },
  GW_USERS_FEATURE: {
    accepts: oneOf('on', 'off'),
    allowed: 'on or off (per-user traffic views, spec 4.5)',
    fallback: 'on',
  },
  GW_PUBLIC_URL: {
    accepts: URL_OF('http|https'),
    allowed: 'http(s)://... : the address callers reach gw at, when a proxy in front of it changes the scheme or host',
  },
  GW_COUNTRY_HEADER: {
    accepts: matching('^[A-Za-z0-9-]{1,64}$'),
    allowed:
      "the name of a request header that a trusted proxy in front of gw sets to the caller's ISO 3166-1 alpha-2 country (e.g. CF-IPCountry)",
  },
  GW_EGRESS: {
    accepts: oneOf('on', 'off'),
    allowed: 'on or off: off (air-gapped) refuses every outgoing destination (webhooks, integrations)',
    fallback: 'on',
  },
  GW_EGRESS_ALLOW_HOSTS: {
    accepts: lengthIn(1, 10_000),
    allowed:
      'comma-separated host names, IP addresses or CIDRs that outgoing destinations may reach over http:// or at private, loopback or link-local addresses (e.g. hooks.internal,10.0.0.0/8)',
  },
  GW_SLACK_API_URL: {
    accepts: URL_OF('http|https'),
    allowed: "http(s)://... : Slack's Web API (the Slack integration's channel list)",
    fallback: 'https://slack.com/api',
  },
  GW_STRIPE_API_URL: {
    accepts: URL_OF('http|https'),
    allowed: "http(s)://... : Stripe's API (the Stripe integration's meter events)",
    fallback: 'https://api.stripe.com',
  },
  GW_LOG_LEVEL: {
    accepts: oneOf(...LOG_LEVELS),
    allowed: 'debug, info, warn or error',
    fallback: 'info',
  },
  GW_METRICS_ADDR: {
    accepts: matching('^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$'),
    allowed:
      'host:port of a separate listener that answers GET /metrics (Prometheus text format) and nothing else, e.g. 127.0.0.1:9464; metrics are off unless this or GW_METRICS_TOKEN is set',
  },
  GW_METRICS_TOKEN: {
    accepts: matching('^[\\x21-\\x7e]{16,256}$'),
    allowed:
      '16 to 256 printable characters, no spaces: /metrics on the main port then answers only with Authorization: Bearer <token> (it is 404 there without one)',
  },
  // OpenTelemetry's own variables, read as its SDKs read them; gw checks them so that a typo stops
  // start-up instead of silently exporting nothing.
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    accepts: URL_OF('http|https'),
    allowed:
      'http(s)://host:port of an OTLP/HTTP collector (traces go to <endpoint>/v1/traces); tracing is off unless this or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    accepts: URL_OF('http|https'),
    allowed:
      'the full http(s) URL traces are posted to, e.g. http://127.0.0.1:4318/v1/traces (wins over OTEL_EXPORTER_OTLP_ENDPOINT)',
  },
  OTEL_EXPORTER_OTLP_PROTOCOL: {
    accepts: oneOf('http/protobuf', 'http/json'),
    allowed:
      'http/protobuf or http/json: gw exports OTLP/HTTP with JSON bodies, which every OTLP/HTTP collector takes; gRPC is not offered',
  },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: {
    accepts: oneOf('http/protobuf', 'http/json'),
    allowed: 'http/protobuf or http/json (see OTEL_EXPORTER_OTLP_PROTOCOL)',
  },
  OTEL_SDK_DISABLED: {
    accepts: BOOLEAN,
    allowed: 'true or false: true turns tracing off whatever else is set',
    fallback: 'false',
  },
  OTEL_TRACES_EXPORTER: {
    accepts: oneOf('otlp', 'none'),
    allowed: 'otlp or none (none turns tracing off)',
    fallback: 'otlp',
  },
  OTEL_TRACES_SAMPLER: {
    accepts: oneOf(...SAMPLERS),
    allowed: SAMPLERS.join(', '),
    fallback: 'parentbased_always_on',
  },
  OTEL_TRACES_SAMPLER_ARG: {
    accepts: matching('^(0(\\.[0-9]+)?|1(\\.0+)?|\\.[0-9]+)$'),
    allowed: 'the ratio of traces kept by traceidratio samplers, from 0 to 1',
    fallback: '1',
  },
  OTEL_SERVICE_NAME: { accepts: lengthIn(1, 256), allowed: 'a service name', fallback: 'gw' },
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: {
    accepts: BOOLEAN,
    allowed:
      "true or false: true puts a call's request and response bodies on its span, as far as its organisation keeps bodies (redacted when it redacts)",
    fallback: 'false',
  },
  OTEL_BSP_SCHEDULE_DELAY: { accepts: MILLISECONDS, allowed: 'milliseconds between span exports', fallback: '5000' },
  OTEL_BSP_EXPORT_TIMEOUT: { accepts: MILLISECONDS, allowed: 'milliseconds an export may take', fallback: '30000' },
  OTEL_BSP_MAX_QUEUE_SIZE: {
    accepts: COUNT,
    allowed: 'spans held for export at most; more are dropped, never waited for',
    fallback: '2048',
  },
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: { accepts: COUNT, allowed: 'spans sent in one export at most', fallback: '512' },
  OPENAI_API_KEY: KEY,
  OPENAI_BASE_URL: baseUrl('openai'),
  ANTHROPIC_API_KEY: KEY,
  ANTHROPIC_BASE_URL: baseUrl('anthropic'),
  GEMINI_API_KEY: KEY,
  GEMINI_BASE_URL: baseUrl('gemini'),
  AZURE_OPENAI_API_KEY: KEY,
  AZURE_OPENAI_ENDPOINT: {
    accepts: URL_OF('https?'),
    allowed: "the Azure OpenAI resource's endpoint, e.g. https://<resource>.openai.azure.com (needed with AZURE_OPENAI_API_KEY)",
  },
  AZURE_OPENAI_API_VERSION: {
    accepts: API_VERSION,
    allowed: 'a dated API version (e.g. 2024-10-21): deployments in the path; unset: the v1 API',
  },
  OPENAI_API_VERSION: { accepts: API_VERSION, allowed: 'as AZURE_OPENAI_API_VERSION, which wins when both are set' },
  AZURE_OPENAI_DEPLOYMENTS: {
    accepts: matching(`^${ALIAS}(,${ALIAS})*$`),
    allowed: 'model=deployment pairs, comma-separated (gpt-4o=prod-4o): the models callers name, served by those deployments',
  },
  AWS_ACCESS_KEY_ID: { accepts: matching('^[A-Z0-9]{16,128}$'), allowed: 'an AWS access key id' },
  AWS_SECRET_ACCESS_KEY: KEY,
  AWS_SESSION_TOKEN: KEY,
  AWS_REGION: { accepts: REGION, allowed: 'an AWS region, e.g. us-east-1 (AWS_DEFAULT_REGION otherwise, else us-east-1)' },
  AWS_DEFAULT_REGION: { accepts: REGION, allowed: 'an AWS region' },
  AWS_ENDPOINT_URL_BEDROCK_RUNTIME: {
    accepts: URL_OF('http|https'),
    allowed: "Bedrock Runtime's address (default: https://bedrock-runtime.<region>.amazonaws.com)",
  },
  GOOGLE_APPLICATION_CREDENTIALS: {
    accepts: lengthIn(1),
    allowed: "the path of a service account's JSON key file, for Vertex AI",
  },
  GOOGLE_CLOUD_PROJECT: {
    accepts: matching('^[a-z][a-z0-9-]{4,61}[a-z0-9]$'),
    allowed: "a Google Cloud project id (default: the service account's)",
  },
  GOOGLE_CLOUD_LOCATION: { accepts: REGION, allowed: 'a Vertex AI location, e.g. us-central1 or global', fallback: 'global' },
  GOOGLE_VERTEX_BASE_URL: {
    accepts: URL_OF('http|https'),
    allowed:
      "Vertex AI's address (default: https://<location>-aiplatform.googleapis.com, or aiplatform.googleapis.com for global)",
  },
  ...VENDOR_VARIABLES,
} satisfies Record<string, Variable>

export type VariableName = keyof typeof VARIABLES
export const VARIABLE_NAMES = Object.keys(VARIABLES) as VariableName[]

export interface Config {
  host: string
  port: number
  dataDir: string
  database: DatabaseLocation
  redisUrl?: string
  clickhouseUrl?: string
  /** Absent means: generate one into the data directory (see server-secret.ts). */
  secret?: string
  metaTtlSeconds: number
  /** GW_REQUEST_RETENTION_DAYS: the most days request records are kept; absent: forever. */
  requestRetentionDays?: number
  upstreamTimeoutSeconds: number
  maxBodyBytes: number
  /** The in-process response cache's bound (GW_CACHE_MAX_BYTES). */
  cacheMaxBytes: number
  usersFeature: boolean
  countryHeader?: string
  /** Where callers reach gw (GW_PUBLIC_URL): the links gw hands out point there. */
  publicUrl?: string
  globalRateLimit: { requests: number; windowSeconds: number }
  logLevel: LogLevel
  /** Prometheus metrics (GW_METRICS_ADDR, GW_METRICS_TOKEN); absent when neither is set. */
  metrics?: { listen?: { hostname: string; port: number }; token?: string }
  /** OpenTelemetry traces (the standard OTEL_* variables); absent when no OTLP endpoint is set, or tracing is turned off. */
  tracing?: TracingConfig
  /** Outgoing destinations (GW_EGRESS, GW_EGRESS_ALLOW_HOSTS). */
  egress: { enabled: boolean; allow?: AllowList }
  /** Where the integrations' services are (GW_SLACK_API_URL, GW_STRIPE_API_URL). */
  integrations: { slackApiUrl: string; stripeApiUrl: string }
  /** The operator's own provider connections: OpenAI's and Anthropic's always (a self-hosted server may need no key), the others when configured. */
  providers: OperatorProviders
}

export class ConfigError extends Error {
  constructor(
    readonly variable: VariableName,
    readonly value: string,
    readonly allowed: string,
  ) {
    super(`${variable}=${JSON.stringify(value)} is not valid; allowed: ${allowed}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

function read(env: Env, name: VariableName): string | undefined {
  const variable: Variable = VARIABLES[name]
  const raw = env[name]
  // An empty value is treated as unset: that is what `GW_REDIS_URL= gw serve` means to an operator.
  const value = raw === undefined || raw === '' ? variable.fallback : raw
  if (value === undefined) return undefined
  if (!variable.accepts(value)) throw new ConfigError(name, value, variable.allowed)
  return value
}

function required(env: Env, name: VariableName): string {
  const value = read(env, name)
  if (value === undefined) throw new Error(`${name} has no fallback`)
  return value
}

/** Variables gw once read and no longer does, with why: set, `gw serve` says so once at start. */
const RETIRED: Readonly<Record<string, string>> = {
  GW_META_MAX_ENTRIES: 'the metadata lookup reads the request log; no store of its own is kept to bound',
}

export const retiredVariables = (env: Env = process.env): Array<{ name: string; why: string }> =>
  Object.entries(RETIRED)
    .filter(([name]) => env[name] !== undefined)
    .map(([name, why]) => ({ name, why }))

/** Parses the environment; throws ConfigError on the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const port = Number(required(env, 'GW_PORT'))
  if (port > 65535) throw new ConfigError('GW_PORT', String(port), VARIABLES.GW_PORT.allowed)
  const dataDir = required(env, 'GW_DATA_DIR')
  const databaseUrl = read(env, 'GW_DATABASE_URL')
  const [requests, windowSeconds] = required(env, 'GW_GLOBAL_RATE_LIMIT').split('/').map(Number) as [number, number]
  const metricsAddr = read(env, 'GW_METRICS_ADDR')
  const metricsToken = read(env, 'GW_METRICS_TOKEN')
  let metricsListen: { hostname: string; port: number } | undefined
  if (metricsAddr !== undefined) {
    const colon = metricsAddr.lastIndexOf(':')
    const metricsPort = Number(metricsAddr.slice(colon + 1))
    if (metricsPort > 65535) throw new ConfigError('GW_METRICS_ADDR', metricsAddr, VARIABLES.GW_METRICS_ADDR.allowed)
    metricsListen = { hostname: metricsAddr.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: metricsPort }
  }
  const retention = read(env, 'GW_REQUEST_RETENTION_DAYS')
  if (retention !== undefined && Number(retention) > MAX_RETENTION_DAYS)
    throw new ConfigError('GW_REQUEST_RETENTION_DAYS', retention, VARIABLES.GW_REQUEST_RETENTION_DAYS.allowed)
  const allowHosts = read(env, 'GW_EGRESS_ALLOW_HOSTS')
  const allow = allowHosts === undefined ? undefined : parseAllowList(allowHosts)
  if (allowHosts !== undefined && !allow)
    throw new ConfigError('GW_EGRESS_ALLOW_HOSTS', allowHosts, VARIABLES.GW_EGRESS_ALLOW_HOSTS.allowed)
  return {
    host: required(env, 'GW_HOST'),
    port,
    dataDir,
    database:
      databaseUrl === undefined
        ? { kind: 'sqlite', path: `${dataDir}/gw.db` }
        : databaseUrl.startsWith('sqlite:')
          ? { kind: 'sqlite', path: databaseUrl.slice('sqlite:'.length) }
          : { kind: 'postgres', url: databaseUrl },
    redisUrl: read(env, 'GW_REDIS_URL'),
    clickhouseUrl: read(env, 'GW_CLICKHOUSE_URL'),
    secret: read(env, 'GW_SECRET'),
    metaTtlSeconds: Number(required(env, 'GW_META_TTL_SECONDS')),
    requestRetentionDays: retention === undefined ? undefined : Number(retention),
    upstreamTimeoutSeconds: Number(required(env, 'GW_UPSTREAM_TIMEOUT_SECONDS')),
    maxBodyBytes: Number(required(env, 'GW_MAX_BODY_BYTES')),
    cacheMaxBytes: Number(required(env, 'GW_CACHE_MAX_BYTES')),
    usersFeature: required(env, 'GW_USERS_FEATURE') === 'on',
    countryHeader: read(env, 'GW_COUNTRY_HEADER')?.toLowerCase(),
    publicUrl: read(env, 'GW_PUBLIC_URL')?.replace(/\/+$/, ''),
    globalRateLimit: { requests, windowSeconds },
    logLevel: required(env, 'GW_LOG_LEVEL') as LogLevel,
    metrics:
      metricsListen || metricsToken
        ? { ...(metricsListen ? { listen: metricsListen } : {}), ...(metricsToken ? { token: metricsToken } : {}) }
        : undefined,
    tracing: tracingConfig(env),
    egress: { enabled: required(env, 'GW_EGRESS') === 'on', allow },
    integrations: {
      slackApiUrl: required(env, 'GW_SLACK_API_URL').replace(/\/+$/, ''),
      stripeApiUrl: required(env, 'GW_STRIPE_API_URL').replace(/\/+$/, ''),
    },
    providers: operatorProviders(env),
  }
}

/**
 * The providers the operator configured, each from its vendor's conventional variables. A provider is
 * on when its credentials are set; one half-configured (a key without the endpoint it belongs to) stops
 * start-up, as a typo would.
 */
function operatorProviders(env: Env): OperatorProviders {
  const keyed = (apiKey: string | undefined, baseUrl: string, more: Partial<ProviderCredentials> = {}) =>
    apiKey === undefined ? undefined : { apiKey, baseUrl, ...more }
  const providers: OperatorProviders = {
    openai: {
      apiKey: read(env, 'OPENAI_API_KEY'),
      baseUrl: read(env, 'OPENAI_BASE_URL') ?? PROVIDERS_TABLE.openai.defaultBaseUrl,
    },
    anthropic: {
      apiKey: read(env, 'ANTHROPIC_API_KEY'),
      baseUrl: read(env, 'ANTHROPIC_BASE_URL') ?? PROVIDERS_TABLE.anthropic.defaultBaseUrl,
    },
    gemini: keyed(read(env, 'GEMINI_API_KEY'), read(env, 'GEMINI_BASE_URL') ?? PROVIDERS_TABLE.gemini.defaultBaseUrl),
    azure: azureProvider(env),
    bedrock: bedrockProvider(env),
    vertex: vertexProvider(env),
  }
  for (const name of VENDOR_NAMES) {
    const upper = name.toUpperCase() as Uppercase<VendorName>
    const baseUrl = read(env, `${upper}_BASE_URL`) ?? PROVIDERS_TABLE[name].defaultBaseUrl
    providers[name] = keyed(read(env, `${upper}_API_KEY`), baseUrl)
  }
  return providers
}

function azureProvider(env: Env): ProviderCredentials | undefined {
  const apiKey = read(env, 'AZURE_OPENAI_API_KEY')
  const endpoint = read(env, 'AZURE_OPENAI_ENDPOINT')
  const apiVersion = read(env, 'AZURE_OPENAI_API_VERSION') ?? read(env, 'OPENAI_API_VERSION')
  const deployments = read(env, 'AZURE_OPENAI_DEPLOYMENTS')
  if (apiKey === undefined) return undefined
  if (endpoint === undefined) throw new ConfigError('AZURE_OPENAI_ENDPOINT', '', VARIABLES.AZURE_OPENAI_ENDPOINT.allowed)
  const models = deployments === undefined ? undefined : Object.fromEntries(deployments.split(',').map((pair) => pair.split('=')))
  return {
    apiKey,
    baseUrl: endpoint.replace(/\/+$/, ''),
    ...(apiVersion === undefined || apiVersion === 'v1' ? {} : { apiVersion }),
    ...(models ? { models } : {}),
  }
}

function bedrockProvider(env: Env): ProviderCredentials | undefined {
  const accessKeyId = read(env, 'AWS_ACCESS_KEY_ID')
  const secret = read(env, 'AWS_SECRET_ACCESS_KEY')
  const sessionToken = read(env, 'AWS_SESSION_TOKEN')
  const region = read(env, 'AWS_REGION') ?? read(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1'
  const endpoint = read(env, 'AWS_ENDPOINT_URL_BEDROCK_RUNTIME')
  if (accessKeyId === undefined && secret === undefined) return undefined
  if (accessKeyId === undefined) throw new ConfigError('AWS_ACCESS_KEY_ID', '', 'set with AWS_SECRET_ACCESS_KEY')
  if (secret === undefined) throw new ConfigError('AWS_SECRET_ACCESS_KEY', '', 'set with AWS_ACCESS_KEY_ID')
  return {
    apiKey: secret,
    accessKeyId,
    ...(sessionToken === undefined ? {} : { sessionToken }),
    region,
    baseUrl: (endpoint ?? `https://bedrock-runtime.${region}.amazonaws.com`).replace(/\/+$/, ''),
  }
}

/** Vertex AI, with a service account's key file: read and checked now, so a bad file stops start-up. */
function vertexProvider(env: Env): ProviderCredentials | undefined {
  const path = read(env, 'GOOGLE_APPLICATION_CREDENTIALS')
  if (path === undefined) return undefined
  const allowed = VARIABLES.GOOGLE_APPLICATION_CREDENTIALS.allowed
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError('GOOGLE_APPLICATION_CREDENTIALS', path, `${allowed}; it cannot be read: ${(error as Error).message}`)
  }
  const account = readServiceAccount(text)
  if (typeof account === 'string') throw new ConfigError('GOOGLE_APPLICATION_CREDENTIALS', path, `${allowed}; ${account}`)
  const project = read(env, 'GOOGLE_CLOUD_PROJECT') ?? account.projectId
  if (project === undefined) throw new ConfigError('GOOGLE_CLOUD_PROJECT', '', 'set: the key file names no project')
  const location = required(env, 'GOOGLE_CLOUD_LOCATION')
  const host = location === 'global' ? 'aiplatform.googleapis.com' : `${location}-aiplatform.googleapis.com`
  return {
    apiKey: text,
    baseUrl: (read(env, 'GOOGLE_VERTEX_BASE_URL') ?? `https://${host}`).replace(/\/+$/, ''),
    project,
    location,
  }
}

/** The rows of the README's environment table, so docs and code cannot drift apart. */
export const describeVariables = (): Array<{ name: VariableName; allowed: string; fallback?: string }> =>
  VARIABLE_NAMES.map((name) => {
    const variable: Variable = VARIABLES[name]
    return { name, allowed: variable.allowed, fallback: variable.fallback }
  })

/**
 * Tracing is on when an OTLP endpoint is named and the SDK is not disabled. Every variable is checked
 * even when tracing is off, so a typo is found at start-up, not when someone turns tracing on.
 */
function tracingConfig(env: Env): TracingConfig | undefined {
  const endpoint = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT')
  const tracesEndpoint = read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
  read(env, 'OTEL_EXPORTER_OTLP_PROTOCOL')
  read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL')
  const disabled = required(env, 'OTEL_SDK_DISABLED') === 'true' || required(env, 'OTEL_TRACES_EXPORTER') === 'none'
  const config = {
    serviceName: required(env, 'OTEL_SERVICE_NAME'),
    sampler: required(env, 'OTEL_TRACES_SAMPLER') as SamplerName,
    ratio: Number(required(env, 'OTEL_TRACES_SAMPLER_ARG')),
    captureContent: required(env, 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT') === 'true',
    batch: {
      scheduledDelayMillis: Number(required(env, 'OTEL_BSP_SCHEDULE_DELAY')),
      exportTimeoutMillis: Number(required(env, 'OTEL_BSP_EXPORT_TIMEOUT')),
      maxQueueSize: Number(required(env, 'OTEL_BSP_MAX_QUEUE_SIZE')),
      maxExportBatchSize: Number(required(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE')),
    },
  }
  const url = tracesEndpoint ?? (endpoint === undefined ? undefined : `${endpoint.replace(/\/+$/, '')}/v1/traces`)
  if (url === undefined || disabled) return undefined
  return { url, ...config }
}
