#!/usr/bin/env bun
/**
 * The `gw` command line; the only file that reads argv. Commands that create something print one JSON
 * line on stdout; diagnostics go to stderr; a bad invocation or configuration exits with status 2.
 */
import { MIN_PASSWORD_LENGTH } from './auth/passwords'
import { rotateServerSecret } from './auth/secret-rotation'
import { newServerSecret, replaceSecretFile } from './auth/server-secret'
import { TIERS, type Tier } from './auth/tiers'
import { Vault } from './auth/vault'
import { ConfigError, loadConfig, retiredVariables } from './config'
import { ApiError } from './errors'
import { serveMetrics } from './observability/observer'
import { openRuntime, type Runtime } from './runtime'
import { serve } from './serve'
import { createServing } from './serving'
import { emailProblem } from './util/email'
import { VERSION } from './version'

const HELP = `gw ${VERSION}: model gateway and management API

Usage:
  gw serve                       start the server (applies migrations first)
  gw migrate                     apply database migrations and exit
  gw bootstrap --org NAME --email EMAIL [--tier free|pro|growth|enterprise] [--password-stdin]
                                 create an organization with its owner; prints
                                 {"orgId","userId","apiKey","sessionToken"}
  gw member add --org ORG_ID --email EMAIL --role owner|admin|member|<customRoleId> [--password-stdin]
                                 add a member; prints {"userId","sessionToken"}
  gw secret rotate               re-seal stored secrets under a new server secret (GW_NEW_SECRET,
                                 or a generated one when the secret lives in GW_DATA_DIR/secret)
  gw credits add --org ORG_ID --usd N
                                 add pass-through-billing credits; prints {"orgId","creditsRemaining"}
  gw --version | --help

--password-stdin reads the person's login password from standard input (at least ${MIN_PASSWORD_LENGTH} characters).
Configuration comes from the environment; see the README for the table of variables.`

class UsageError extends Error {}

/**
 * Bun's own bound, above gw's (GW_MAX_BODY_BYTES): gw answers a body over its limit with a 413 that
 * says so, in the caller's format; Bun's bare 413 is only the backstop.
 */
const BUN_BODY_SLACK_BYTES = 1024 * 1024
/** What is past its organisation's retention (records, bodies) is deleted this often, and first this soon after start-up. */
const RETENTION_INTERVAL_MS = 3600 * 1000
const RETENTION_FIRST_MS = 60 * 1000

/**
 * The executable starts with JavaScriptCore's tier-up thresholds raised (scripts/build.ts): code that
 * runs only while starting stays in the interpreter instead of being compiled for nothing. Once gw
 * listens, the normal thresholds apply, so the request path is compiled as soon as it is hot. Bun
 * only: under another runtime, or from source, there is nothing to restore.
 */
const normalJitPolicy = (): void => globalThis.Bun?.unsafe.setJITPolicy?.(1)

const fail = (message: string, code = 2): never => {
  process.stderr.write(`gw: ${message}\n`)
  process.exit(code)
}

async function readPassword(wanted: boolean | undefined): Promise<string | undefined> {
  if (!wanted) return undefined
  const password = (await new Response(Bun.stdin.stream()).text()).replace(/\r?\n$/, '')
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new UsageError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`)
  return password
}

function need(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`)
  return value
}

/** The person's address, refused before anything is opened: an Owner whose address the console refuses never signs in. */
function needEmail(value: string | undefined): string {
  const email = need(value, '--email')
  const problem = emailProblem(email)
  if (problem) throw new UsageError(`--email ${problem}`)
  return email
}

/** The services a command uses: imported when it runs, so `gw serve` starts without the modules it builds on first use. */
const servicesFor = async (deps: Runtime['deps']) => (await import('./services')).createServices(deps)

async function withRuntime(work: (runtime: Runtime) => Promise<void>): Promise<void> {
  const runtime = await openRuntime(loadConfig(), { migrate: true })
  try {
    await work(runtime)
  } finally {
    await runtime.close()
  }
}

async function serveCommand(): Promise<void> {
  const runtime = await openRuntime(loadConfig(), { migrate: true, serving: true })
  const { config, deps } = runtime
  const log = deps.log
  const services = createServing(deps)
  services.retention.start(RETENTION_FIRST_MS, RETENTION_INTERVAL_MS)
  // The management API, its services included, is imported and built when first asked for: see ManagementApp.
  const managementApp = async () => {
    const [{ createApp }, { createServices }] = await Promise.all([import('./app'), import('./services')])
    return createApp(deps, createServices(deps, services))
  }
  const server = serve(managementApp, services, {
    hostname: config.host,
    port: config.port,
    maxRequestBodySize: config.maxBodyBytes + BUN_BODY_SLACK_BYTES,
    log,
  })
  const listen = config.metrics?.listen
  const metricsServer = listen && deps.metrics ? serveMetrics(deps.metrics, listen.hostname, listen.port) : undefined
  if (metricsServer) log.info('metrics listening', { url: `http://${listen?.hostname}:${metricsServer.port}/metrics` })
  services.deliverer.start()
  normalJitPolicy()
  log.info('gw listening', { version: VERSION, url: `http://${config.host}:${server.port}`, database: runtime.db.dialect })
  for (const { name, why } of retiredVariables()) log.warn(`${name} is no longer used and is ignored`, { why })
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info('shutting down', { signal })
    // Finish the requests in flight, then write what they queued, then close.
    // The retention batch under way commits (or not) whole before the database closes.
    const retentionStopped = services.retention.stop()
    await server.stop(false)
    await metricsServer?.stop(true)
    // The attempts under way are settled before the database closes; what is not sent yet stays in
    // the outbox for the next start, as do the events the last requests write.
    await services.deliverer.stop()
    await retentionStopped
    await runtime.close()
    log.info('stopped', { requestLog: JSON.stringify(deps.requestLog.snapshot()) })
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

/**
 * Re-seals every stored secret under a new server secret. With GW_SECRET set, the new one comes from
 * GW_NEW_SECRET and the operator swaps them afterwards; with the generated secret file, a new secret is
 * generated and the file replaced once the database has moved.
 */
async function rotateSecret(): Promise<void> {
  const config = loadConfig()
  const fromEnvironment = config.secret !== undefined
  const next = process.env.GW_NEW_SECRET || (fromEnvironment ? undefined : newServerSecret())
  if (!next) throw new UsageError('GW_SECRET is set: put the new secret (at least 32 characters) in GW_NEW_SECRET')
  if (next.length < 32) throw new UsageError('GW_NEW_SECRET must have at least 32 characters')
  return withRuntime(async ({ deps }) => {
    const moved = await rotateServerSecret(deps.store, deps.vault, new Vault(next))
    const secretFile = fromEnvironment ? undefined : replaceSecretFile(config.dataDir, next)
    console.log(JSON.stringify({ rotated: moved, ...(secretFile ? { secretFile } : {}) }))
    if (fromEnvironment)
      process.stderr.write('gw: done; set GW_SECRET to the value of GW_NEW_SECRET on every instance and restart them\n')
  })
}

async function main(argv: string[]): Promise<void> {
  // The server takes no options: node:util, read for the other commands' options, costs a start
  // several milliseconds (its module evaluates Node's internal helpers).
  if (argv.length === 1 && argv[0] === 'serve') return serveCommand()
  const { parseArgs } = await import('node:util')
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      org: { type: 'string' },
      email: { type: 'string' },
      tier: { type: 'string' },
      role: { type: 'string' },
      usd: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    },
  })
  const command = positionals.join(' ')
  if (values.version) return void console.log(VERSION)
  if (values.help || command === '' || command === 'help') return void console.log(HELP)

  switch (command) {
    case 'serve':
      return serveCommand()
    case 'migrate':
      return withRuntime(async ({ db }) => {
        console.log(JSON.stringify({ dialect: db.dialect, migrations: db.migrationTags }))
      })
    case 'bootstrap': {
      const tier = values.tier ?? 'free'
      if (!(TIERS as readonly string[]).includes(tier)) throw new UsageError(`--tier must be one of ${TIERS.join(', ')}`)
      const input = { orgName: need(values.org, '--org'), email: needEmail(values.email), tier: tier as Tier }
      const password = await readPassword(values['password-stdin'])
      return withRuntime(async (runtime) => {
        const result = await (await servicesFor(runtime.deps)).organizations.bootstrap({ ...input, password })
        console.log(JSON.stringify(result))
      })
    }
    case 'member add': {
      const input = { orgId: need(values.org, '--org'), email: needEmail(values.email), role: need(values.role, '--role') }
      const password = await readPassword(values['password-stdin'])
      return withRuntime(async (runtime) => {
        console.log(JSON.stringify(await (await servicesFor(runtime.deps)).members.add({ ...input, password })))
      })
    }
    case 'credits add': {
      const orgId = need(values.org, '--org')
      const usd = Number(need(values.usd, '--usd'))
      if (!Number.isFinite(usd) || usd <= 0 || usd > 1_000_000)
        throw new UsageError('--usd must be a positive number of US dollars, at most 1000000')
      return withRuntime(async ({ deps }) => {
        console.log(JSON.stringify(await (await servicesFor(deps)).organizations.addCredits(orgId, usd)))
      })
    }
    case 'secret rotate':
      return rotateSecret()
    default:
      throw new UsageError(`unknown command "${command}"; see gw --help`)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) fail(`configuration: ${error.message}`)
  if (error instanceof UsageError) fail(error.message)
  if (error instanceof ApiError) fail(error.message, 1)
  if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) fail(error.message)
  fail(error instanceof Error ? error.message : String(error), 1)
})
