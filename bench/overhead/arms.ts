/**
 * The ways to reach the same fake provider: directly, through nginx, through a bare Bun proxy (the
 * floor for anything built on Bun), through gw and through Portkey's open-source gateway. Each arm is
 * a URL and the headers its users would send.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import type { Settings } from './config'
import { gwBinary, gwEnv, gwHeaders, prepareOrg, startGw } from './gw'
import { freePort, start, waitForHttp } from './processes'

export const ARM_NAMES = ['direct', 'nginx', 'bun-proxy', 'gw', 'portkey'] as const
export type ArmName = (typeof ARM_NAMES)[number]

/** A server the load clients call: one of the suite's arms, or a variant of gw in `ab.ts`. */
export interface Target {
  name: string
  /** Where to POST a chat completion. */
  url: string
  headers: Record<string, string>
  /** The process that serves it (for the direct arm, the fake provider); scenario (c) watches its CPU. */
  pid: number
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

async function startGwArm(settings: Settings, fakePort: number): Promise<{ arm: Arm; gw: Subprocess; gwLog: string }> {
  const binary = gwBinary(settings.repoRoot)
  const env = gwEnv(join(settings.workDir, 'gw-data'), freePort(), fakePort)
  const org = await prepareOrg(binary, env)
  const gwLog = join(settings.workDir, 'gw.log')
  const gw = await startGw(binary, env, gwLog)
  const arm: Arm = { name: 'gw', url: `http://127.0.0.1:${env.GW_PORT}${PATH}`, headers: gwHeaders(org.apiKey), pid: gw.pid }
  return { arm, gw, gwLog }
}

/** The fake provider called directly, as its users' SDKs would. */
export const directArm = (fakePort: number, fakePid: number): Arm => ({
  name: 'direct',
  url: `http://127.0.0.1:${fakePort}${PATH}`,
  headers: PROVIDER_HEADERS,
  pid: fakePid,
})

export async function startArms(settings: Settings): Promise<Running> {
  const { port: fakePort, pid: fakePid } = await startFake(settings)
  const direct = directArm(fakePort, fakePid)
  const nginx = await startNginx(settings, fakePort)
  const bunProxy = await startBunProxy(settings, fakePort)
  const { arm: gwArm, gw, gwLog } = await startGwArm(settings, fakePort)
  const portkey = await startPortkey(settings, fakePort)
  return { arms: [direct, nginx, bunProxy, gwArm, portkey], fakePort, fakePid, gw, gwLog }
}
