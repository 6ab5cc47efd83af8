/**
 * The ways to reach the same fake provider: directly, through nginx, through a bare Bun proxy (the
 * floor for anything built on Bun), through gw and through Portkey's open-source gateway. Each arm is
 * a URL and the headers its users would send.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { CONVERSE_BODY, chatBody, GENERATE_CONTENT_BODY, messagesBody, PLAIN_BODY, STREAM_BODY } from './calls'
import type { Settings } from './config'
import {
  AZURE_API_VERSION,
  AZURE_DEPLOYMENT,
  addBudgetLimits,
  addProductionSettings,
  BENCH_METRICS_TOKEN,
  gwBinary,
  gwEnv,
  gwHeaders,
  prepareOrg,
  providersEnv,
  startGw,
  VERTEX_LOCATION,
  VERTEX_PROJECT,
} from './gw'
import { freePort, start, waitForHttp } from './processes'

/** `gw-production`: gw with what a production organisation switches on (`addProductionSettings`). */
export const ARM_NAMES = ['direct', 'nginx', 'bun-proxy', 'gw', 'gw-production', 'portkey'] as const
export type ArmName = (typeof ARM_NAMES)[number]

/** The formats the fake provider answers in (`fake-provider.ts`); `token` is its token endpoint, counted apart. */
export type FakeRoute = 'openai' | 'azure' | 'anthropic' | 'gemini' | 'vertex' | 'bedrock' | 'token'

/** A server the load clients call: one of the suite's arms, or a variant of gw in `ab.ts`. */
export interface Target {
  name: string
  /** Where to POST the plain call. */
  url: string
  headers: Record<string, string>
  /** The headers of each call in turn, for calls spread over several API keys; `headers` when absent. */
  nextHeaders?: () => Record<string, string>
  /** The process that serves it (for a direct arm, the fake provider); scenario (c) watches its CPU. */
  pid: number
  /** The plain call's body; the suite's chat completion when absent. */
  body?: string
  /** The streamed call, when it is not the suite's streamed chat completion at `url`. */
  stream?: { url: string; body: string }
  /** What a whole stream holds last in the caller's format; OpenAI's `data: [DONE]` when absent. */
  streamEnd?: string
  /** The fake provider's format the target must reach; any when absent. */
  reaches?: FakeRoute
}

export interface Arm extends Target {
  name: ArmName
}

export interface Running {
  arms: Arm[]
  fakePort: number
  fakePid: number
  gw: Subprocess
  gwLog: string
  /** The production organisation's gw, a process of its own so that the plain arm's memory is its own. */
  gwProduction: Subprocess
  gwProductionLog: string
}

export const PATH = '/v1/chat/completions'
const PROVIDER_HEADERS = { authorization: 'Bearer sk-bench-operator', 'content-type': 'application/json' }
/** Any answer at all: the server is listening. */
const anyAnswer = () => true

export async function startFake(settings: Pick<Settings, 'workDir' | 'fakeLatencyMs'>): Promise<{ port: number; pid: number }> {
  const port = freePort()
  const logPath = join(settings.workDir, 'fake-provider.log')
  const child = start([process.execPath, join(import.meta.dir, 'fake-provider.ts')], {
    env: { ...process.env, FAKE_PORT: String(port), FAKE_LATENCY_MS: String(settings.fakeLatencyMs) },
    logPath,
  })
  await waitForHttp(`http://127.0.0.1:${port}/stats`, anyAnswer, 10_000, logPath)
  return { port, pid: child.pid }
}

/**
 * A minimal reverse proxy: keep-alive to the upstream, no access log, and no response buffering so a
 * stream's frames pass as they come (what any SSE proxy configures).
 */
function nginxConfig(dir: string, port: number, fakePort: number, workers: number): string {
  return `daemon off;
worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  upstream fake { server 127.0.0.1:${fakePort}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://fake;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`
}

async function startNginx(settings: Settings, fakePort: number): Promise<Arm> {
  const dir = join(settings.workDir, 'nginx')
  mkdirSync(dir, { recursive: true })
  const port = freePort()
  const conf = join(dir, 'nginx.conf')
  writeFileSync(conf, nginxConfig(dir, port, fakePort, settings.nginxWorkers))
  const logPath = join(dir, 'stdio.log')
  // -e: log start-up errors here too, before the config names its own error log.
  const child = start(['nginx', '-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { env: process.env, logPath })
  await waitForHttp(`http://127.0.0.1:${port}/stats`, anyAnswer, 10_000, logPath)
  return { name: 'nginx', url: `http://127.0.0.1:${port}${PATH}`, headers: PROVIDER_HEADERS, pid: child.pid }
}

export async function startBunProxy(settings: Pick<Settings, 'workDir'>, fakePort: number): Promise<Arm> {
  const port = freePort()
  const logPath = join(settings.workDir, 'bun-proxy.log')
  const child = start([process.execPath, join(import.meta.dir, 'bun-proxy.ts')], {
    env: { ...process.env, BUN_PROXY_PORT: String(port), UPSTREAM: `http://127.0.0.1:${fakePort}` },
    logPath,
  })
  await waitForHttp(`http://127.0.0.1:${port}/stats`, anyAnswer, 10_000, logPath)
  return { name: 'bun-proxy', url: `http://127.0.0.1:${port}${PATH}`, headers: PROVIDER_HEADERS, pid: child.pid }
}

export const portkeyDir = join(import.meta.dir, 'node_modules', '@portkey-ai', 'gateway')

/**
 * Portkey's own start script under Node (its `npx @portkey-ai/gateway`), on a port we choose;
 * --headless leaves out its web console. Each request names the provider and the custom host.
 */
async function startPortkey(settings: Settings, fakePort: number): Promise<Arm> {
  const port = freePort()
  const logPath = join(settings.workDir, 'portkey.log')
  const child = start(['node', join(portkeyDir, 'build', 'start-server.js'), `--port=${port}`, '--headless'], {
    env: process.env,
    logPath,
  })
  await waitForHttp(`http://127.0.0.1:${port}/`, (response) => response.ok, 20_000, logPath)
  return {
    name: 'portkey',
    url: `http://127.0.0.1:${port}${PATH}`,
    headers: {
      ...PROVIDER_HEADERS,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `http://127.0.0.1:${fakePort}/v1`,
    },
    pid: child.pid,
  }
}

/**
 * gw as the suite's plain organisation has it (nothing switched on), or, for `gw-production`, with what
 * a production organisation uses: two budget limits, a fallback chain on the called model (falling
 * back to Anthropic's, configured at the fake), an access rule on models, and metrics.
 */
async function startGwArm(
  settings: Settings,
  fakePort: number,
  name: 'gw' | 'gw-production',
): Promise<{ arm: Arm; gw: Subprocess; gwLog: string }> {
  const binary = gwBinary(settings.repoRoot)
  const dir = join(settings.workDir, `${name}-data`)
  const production = name === 'gw-production'
  const port = freePort()
  const env = {
    ...gwEnv(dir, port, fakePort),
    ...(production ? { ...providersEnv(settings.workDir, fakePort), GW_METRICS_TOKEN: BENCH_METRICS_TOKEN } : {}),
  }
  const org = await prepareOrg(binary, env)
  const gwLog = join(settings.workDir, `${name}.log`)
  const gw = await startGw(binary, env, gwLog)
  if (production) {
    await addBudgetLimits(port, org.sessionToken, 2)
    await addProductionSettings(port, org.sessionToken, 'gpt-4o')
  }
  const arm: Arm = { name, url: `http://127.0.0.1:${port}${PATH}`, headers: gwHeaders(org.apiKey), pid: gw.pid }
  return { arm, gw, gwLog }
}

/** The fake provider called directly, as its users' SDKs would. */
export const directArm = (fakePort: number, fakePid: number): Arm => ({
  name: 'direct',
  url: `http://127.0.0.1:${fakePort}${PATH}`,
  headers: PROVIDER_HEADERS,
  pid: fakePid,
})

/** What a caller in each format sends and how its stream ends: the same two-word prompt in each. */
interface CallerFormat {
  /** The plain and streamed calls' path and body for a model; the path is relative to the server. */
  plain(model: string): { path: string; body: string }
  stream(model: string): { path: string; body: string }
  streamEnd: string
}

const modelPath = (model: string, method: string) => `/v1beta/models/${encodeURIComponent(model)}:${method}`

const CALLERS = {
  openai: {
    plain: (model) => ({ path: PATH, body: chatBody(model, false) }),
    stream: (model) => ({ path: PATH, body: chatBody(model, true) }),
    streamEnd: 'data: [DONE]',
  },
  anthropic: {
    plain: (model) => ({ path: '/v1/messages', body: messagesBody(model, false) }),
    stream: (model) => ({ path: '/v1/messages', body: messagesBody(model, true) }),
    streamEnd: 'event: message_stop',
  },
  gemini: {
    plain: (model) => ({ path: modelPath(model, 'generateContent'), body: GENERATE_CONTENT_BODY }),
    stream: (model) => ({ path: modelPath(model, 'streamGenerateContent?alt=sse'), body: GENERATE_CONTENT_BODY }),
    // Google's stream has no closing event: the chunk that says why the model stopped is the last.
    streamEnd: '"finishReason":"STOP"',
  },
} satisfies Record<string, CallerFormat>

type Caller = keyof typeof CALLERS

/**
 * The ways through gw `ab.ts` measures, each a caller's format and the provider the model leads to:
 * `openai-openai`, `openai-azure` and `anthropic-bedrock` pass the body through (the last signed, and
 * its stream re-framed from AWS's), the others translate it through gw's canonical call. Translated arms name their provider (`<provider>/<model>`), so every one of them
 * resolves its model the same way; the passthrough arm names the bare model, as the suite always has.
 */
export const GW_ARMS = {
  'openai-openai': { caller: 'openai', model: 'gpt-4o', reaches: 'openai' },
  'openai-azure': { caller: 'openai', model: 'azure/gpt-4o', reaches: 'azure' },
  'openai-anthropic': { caller: 'openai', model: 'anthropic/claude-sonnet-4-5', reaches: 'anthropic' },
  'openai-gemini': { caller: 'openai', model: 'gemini/gemini-2.5-flash', reaches: 'gemini' },
  'openai-vertex': { caller: 'openai', model: 'vertex/gemini-2.5-flash', reaches: 'vertex' },
  'openai-bedrock': { caller: 'openai', model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', reaches: 'bedrock' },
  'anthropic-gemini': { caller: 'anthropic', model: 'gemini/gemini-2.5-flash', reaches: 'gemini' },
  // Claude on Bedrock for an Anthropic caller: InvokeModel, signed but not translated.
  'anthropic-bedrock': { caller: 'anthropic', model: 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0', reaches: 'bedrock' },
  'gemini-openai': { caller: 'gemini', model: 'gpt-4o', reaches: 'openai' },
} satisfies Record<string, { caller: Caller; model: string; reaches: Exclude<FakeRoute, 'token'> }>

export type GwArmName = keyof typeof GW_ARMS
export const isGwArmName = (name: string): name is GwArmName => Object.hasOwn(GW_ARMS, name)

/**
 * An arm through a running gw: its caller's format at gw's address, with the organisation's key, or
 * with each of `apiKeys` in turn when there are several (the first is the key of (b)'s wrk).
 */
export function gwTarget(name: string, arm: GwArmName, gwPort: number, apiKeys: readonly string[], pid: number): Target {
  const { caller, model, reaches } = GW_ARMS[arm]
  const format: CallerFormat = CALLERS[caller]
  const at = (call: { path: string; body: string }) => ({ url: `http://127.0.0.1:${gwPort}${call.path}`, body: call.body })
  const plain = at(format.plain(model))
  return {
    name,
    url: plain.url,
    body: plain.body,
    stream: at(format.stream(model)),
    headers: gwHeaders(apiKeys[0] ?? ''),
    ...(apiKeys.length > 1 ? { nextHeaders: inTurn(apiKeys.map(gwHeaders)) } : {}),
    pid,
    streamEnd: format.streamEnd,
    reaches,
  }
}

/** Each of `items` in turn, from the first. */
function inTurn<T>(items: readonly T[]): () => T {
  let next = 0
  return () => items[next++ % items.length] as T
}

export const directName = (route: Exclude<FakeRoute, 'token'>): string => (route === 'openai' ? 'direct' : `direct-${route}`)

/**
 * The fake provider called directly in one of its formats, as that provider's SDK would call it: the
 * floor a gw arm reaching that format is compared with. Bedrock's call goes unsigned and Vertex's with
 * a made-up token (the fake checks neither), so what signing and tokens cost shows on gw's side only.
 * The OpenAI one is the suite's `direct` arm.
 */
export function directTarget(route: Exclude<FakeRoute, 'token'>, fakePort: number, fakePid: number): Target {
  const fake = `http://127.0.0.1:${fakePort}`
  const target = (
    plain: { url: string; body: string },
    stream: { url: string; body: string },
    streamEnd: string,
    headers = {},
  ) => ({
    name: directName(route),
    url: plain.url,
    body: plain.body,
    stream,
    streamEnd,
    headers: { 'content-type': 'application/json', ...headers },
    pid: fakePid,
    reaches: route,
  })
  const google = (base: string, model: string, headers: Record<string, string>) =>
    target(
      { url: `${base}/${model}:generateContent`, body: GENERATE_CONTENT_BODY },
      { url: `${base}/${model}:streamGenerateContent?alt=sse`, body: GENERATE_CONTENT_BODY },
      CALLERS.gemini.streamEnd,
      headers,
    )
  switch (route) {
    case 'openai':
      return target({ url: `${fake}${PATH}`, body: PLAIN_BODY }, { url: `${fake}${PATH}`, body: STREAM_BODY }, 'data: [DONE]', {
        authorization: PROVIDER_HEADERS.authorization,
      })
    case 'azure': {
      const url = `${fake}/openai/deployments/${AZURE_DEPLOYMENT}/chat/completions?api-version=${AZURE_API_VERSION}`
      return target({ url, body: PLAIN_BODY }, { url, body: STREAM_BODY }, 'data: [DONE]', { 'api-key': 'bench-azure-key' })
    }
    case 'anthropic':
      return target(
        { url: `${fake}/v1/messages`, body: messagesBody('claude-sonnet-4-5', false) },
        { url: `${fake}/v1/messages`, body: messagesBody('claude-sonnet-4-5', true) },
        CALLERS.anthropic.streamEnd,
        { 'x-api-key': 'sk-ant-bench-operator', 'anthropic-version': '2023-06-01' },
      )
    case 'gemini':
      return google(`${fake}/v1beta/models`, 'gemini-2.5-flash', { 'x-goog-api-key': 'AIzaBenchOperator' })
    case 'vertex':
      return google(
        `${fake}/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google/models`,
        'gemini-2.5-flash',
        { authorization: 'Bearer ya29.bench-token' },
      )
    case 'bedrock': {
      const model = `${fake}/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}`
      return target(
        { url: `${model}/converse`, body: CONVERSE_BODY },
        { url: `${model}/converse-stream`, body: CONVERSE_BODY },
        'messageStop',
      )
    }
  }
}

export async function startArms(settings: Settings): Promise<Running> {
  const { port: fakePort, pid: fakePid } = await startFake(settings)
  const direct = directArm(fakePort, fakePid)
  const nginx = await startNginx(settings, fakePort)
  const bunProxy = await startBunProxy(settings, fakePort)
  const { arm: gwArm, gw, gwLog } = await startGwArm(settings, fakePort, 'gw')
  const production = await startGwArm(settings, fakePort, 'gw-production')
  const portkey = await startPortkey(settings, fakePort)
  return {
    arms: [direct, nginx, bunProxy, gwArm, production.arm, portkey],
    fakePort,
    fakePid,
    gw,
    gwLog,
    gwProduction: production.gw,
    gwProductionLog: production.gwLog,
  }
}
