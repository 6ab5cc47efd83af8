/**
 * gw as a user runs it: the compiled binary, its own data directory (SQLite request log), an
 * organisation made with the CLI, and the operator's OpenAI settings pointing at the fake provider
 * (with `providersEnv`, every other provider's too).
 */
import { generateKeyPairSync } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { run, start, waitForHttp } from './processes'

export const gwBinary = (repoRoot: string) => join(repoRoot, 'dist', 'gw')

export type GwEnv = Record<string, string | undefined>

/** A clean environment, so nothing from the caller's shell (a GW_DATABASE_URL, say) changes the arm. */
export function gwEnv(dataDir: string, port: number, fakePort: number): GwEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GW_DATA_DIR: dataDir,
    GW_HOST: '127.0.0.1',
    GW_PORT: String(port),
    // Layer 1 stays on and counts every request; the limit is only set so high that it never refuses.
    GW_GLOBAL_RATE_LIMIT: '100000000/60',
    GW_LOG_LEVEL: 'warn',
    OPENAI_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
    OPENAI_API_KEY: 'sk-bench-operator',
  }
}

/** Where the bench's Vertex and Azure connections point, as the direct arms call them too. */
export const VERTEX_PROJECT = 'bench-project'
export const VERTEX_LOCATION = 'us-central1'
export const AZURE_DEPLOYMENT = 'prod-4o'
export const AZURE_API_VERSION = '2024-10-21'

let privateKeyPem: string | undefined

/**
 * A service account's key file whose token_uri is the fake provider's. gw signs its assertion with the
 * key for real (the fake does not check it), so the key must be a real one; one is made per run.
 */
function serviceAccountFile(dir: string, fakeUrl: string): string {
  privateKeyPem ??= generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString()
  const path = join(dir, 'vertex-service-account.json')
  writeFileSync(
    path,
    JSON.stringify({
      type: 'service_account',
      project_id: VERTEX_PROJECT,
      private_key_id: 'bench-key-1',
      private_key: privateKeyPem,
      client_email: 'bench@bench-project.iam.gserviceaccount.com',
      token_uri: `${fakeUrl}/token`,
    }),
  )
  return path
}

/**
 * The operator's variables for every other provider gw reaches (Anthropic, the Gemini API, Vertex
 * AI, Bedrock, Azure OpenAI), each pointing at the fake provider; the key file is written into `dir`.
 * Added to `gwEnv` only when a run calls them, so a run of the OpenAI arm alone configures gw as before
 * and a build that predates these providers starts with the same environment.
 */
export function providersEnv(dir: string, fakePort: number): GwEnv {
  const fake = `http://127.0.0.1:${fakePort}`
  return {
    ANTHROPIC_API_KEY: 'sk-ant-bench-operator',
    ANTHROPIC_BASE_URL: fake,
    GEMINI_API_KEY: 'AIzaBenchOperator',
    GEMINI_BASE_URL: fake,
    AWS_ACCESS_KEY_ID: 'AKIABENCHOPERATOR000',
    AWS_SECRET_ACCESS_KEY: 'bench-operator-secret',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake,
    GOOGLE_APPLICATION_CREDENTIALS: serviceAccountFile(dir, fake),
    GOOGLE_CLOUD_PROJECT: VERTEX_PROJECT,
    GOOGLE_CLOUD_LOCATION: VERTEX_LOCATION,
    GOOGLE_VERTEX_BASE_URL: fake,
    AZURE_OPENAI_API_KEY: 'bench-azure-key',
    AZURE_OPENAI_ENDPOINT: fake,
    AZURE_OPENAI_API_VERSION: AZURE_API_VERSION,
    // The bench's callers name gpt-4o; Azure serves it under the deployment's name.
    AZURE_OPENAI_DEPLOYMENTS: `gpt-4o=${AZURE_DEPLOYMENT}`,
  }
}

export interface GwOrg {
  orgId: string
  apiKey: string
  /** The Owner's session, for the management API. */
  sessionToken: string
}

/** Creates the organisation and its API key, and gives it credits (calls are pass-through billed). */
export async function prepareOrg(binary: string, env: GwEnv): Promise<GwOrg> {
  const created = JSON.parse(
    await run([binary, 'bootstrap', '--org', 'bench', '--email', 'b@example.test', '--tier', 'enterprise'], env),
  ) as GwOrg
  await run([binary, 'credits', 'add', '--org', created.orgId, '--usd', '1000000'], env)
  return { orgId: created.orgId, apiKey: created.apiKey, sessionToken: created.sessionToken }
}

/**
 * Spend limits that apply to every call of the suite's organisation and never refuse (each far above
 * what a run spends), at every kind of scope and window a call is counted in: what a budget costs a
 * call is reserving and settling against each of them.
 */
const BENCH_LIMITS: ReadonlyArray<{ path: string; body: Record<string, unknown> }> = [
  { path: '/v1/budget/window-limit', body: { scope: { kind: 'org' }, metric: 'usd', limit: 1e9, window: 'day' } },
  { path: '/v1/budget/window-limit', body: { scope: { kind: 'org' }, metric: 'requests', limit: 1e11, window: 'month' } },
  { path: '/v1/budget/window-limit', body: { scope: { kind: 'key' }, metric: 'tokens', limit: 1e12, window: 'week' } },
  {
    path: '/v1/budget/window-limit',
    body: { scope: { kind: 'model', id: 'gpt-4o' }, metric: 'usd', limit: 1e9, window: { seconds: 3600 } },
  },
  { path: '/v1/budget/velocity-limit', body: { scope: { kind: 'provider', id: 'openai' }, maxUsd: 1e9, windowSeconds: 3600 } },
]

export async function addBudgetLimits(port: number, sessionToken: string, count: number): Promise<void> {
  if (count > BENCH_LIMITS.length) throw new Error(`at most ${BENCH_LIMITS.length} budget limits, asked for ${count}`)
  for (const { path, body } of BENCH_LIMITS.slice(0, count)) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (response.status !== 200) throw new Error(`PUT ${path} answered ${response.status}: ${await response.text()}`)
  }
}

/** A bearer token for `/metrics` on gw's main port: set, metrics are on (GW_METRICS_TOKEN). */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789'

async function manage(port: number, sessionToken: string, method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
}

/**
 * What a production organisation has switched on, beside the budgets (`addBudgetLimits`): a fallback
 * chain on the model its calls name (served by that model first, so every call follows the chain's
 * first step), and an access rule on models (a denial of another model), so every call's model is
 * decided by the rules. Metrics come from the environment (BENCH_METRICS_TOKEN).
 */
export async function addProductionSettings(port: number, sessionToken: string, model: string): Promise<void> {
  await manage(port, sessionToken, 'POST', '/v1/gateway/fallback-chains', {
    name: 'bench chain',
    match: { model },
    steps: [{ model }, { model: 'anthropic/claude-sonnet-4-5' }],
  })
  await manage(port, sessionToken, 'POST', '/v1/governance/access-rules', {
    subject: { kind: 'org' },
    resource: { kind: 'model', id: 'o1-pro' },
    effect: 'deny',
  })
}

/**
 * `count` more API keys of the organisation, as a team gives one to each service: the authenticator
 * reads a key's record again each second it is used, so many keys in use cost reads that one does not.
 */
export async function addApiKeys(port: number, sessionToken: string, count: number): Promise<string[]> {
  const keys: string[] = []
  for (let i = 0; i < count; i++) {
    const response = await fetch(`http://127.0.0.1:${port}/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench key ${i + 2}` }),
    })
    const body = (await response.json()) as { data?: { key?: string } }
    if (response.status !== 201 || !body.data?.key)
      throw new Error(`POST /v1/api-keys answered ${response.status}: ${JSON.stringify(body)}`)
    keys.push(body.data.key)
  }
  return keys
}

/** The headers of a gw call: a real API key, and a layer-2 policy (a token bucket) that never refuses. */
export const gwHeaders = (apiKey: string): Record<string, string> => ({
  authorization: `Bearer ${apiKey}`,
  'content-type': 'application/json',
  'gw-ratelimit-policy': '100000000;w=3600',
})

const healthy = (response: Response) => response.status === 200

export async function startGw(binary: string, env: GwEnv, logPath: string): Promise<Subprocess> {
  const child = start([binary, 'serve'], { env, logPath })
  await waitForHttp(`http://127.0.0.1:${env.GW_PORT}/healthcheck`, healthy, 15_000, logPath)
  return child
}
