import type { Redis, RedisOptions } from 'ioredis'
import { type InvalidationBus, LocalInvalidationBus, RedisInvalidationBus } from './auth/invalidation'
import { loadCredentialKey } from './auth/secret-rotation'
import { loadServerSecret } from './auth/server-secret'
import { Vault } from './auth/vault'
import type { Config } from './config'
import { EgressPolicy } from './egress/policy'
import { MemoryResponseCache } from './gateway/cache/memory'
import { RedisResponseCache } from './gateway/cache/redis'
import type { ResponseCache } from './gateway/cache/store'
import { FailoverMetaStore, type MetaStore, RedisMetaStore } from './gateway/meta/store'
import { RequestLog } from './gateway/request-log/request-log'
import { ThreadedLogWriter, writeEntries } from './gateway/request-log/writer'
import { FailoverKeyHealth, type KeyHealth, MemoryKeyHealth } from './gateway/routing/key-health'
import { RedisKeyHealth } from './gateway/routing/redis-key-health'
import { FailoverLimiterStore } from './limits/failover-store'
import { RedisLimiterStore } from './limits/redis-store'
import { type LimiterStore, MemoryLimiterStore } from './limits/store'
import { createLogger, type Logger } from './log'
import type { AppDeps } from './serving'
import { MemorySpendStore, type SpendStore } from './spend/counters'
import { FailoverSpendStore } from './spend/failover-counters'
import { RedisSpendStore } from './spend/redis-counters'
import { type Database, openDatabase } from './store/database'
import { migrate } from './store/migrate'
import { createStore } from './store/store'
import { CircuitBreaker } from './util/breaker'
import type { ComponentState, HealthProbe } from './util/health-probe'

/** What a running gw holds open: built once by `gw serve` and by each CLI command, closed on exit. */
export interface Runtime {
  config: Config
  db: Database
  deps: AppDeps
  /** Writes what is still queued, then closes connections; for shutdown. */
  close(): Promise<void>
}

/**
 * How gw talks to Redis, chosen so that an outage costs a call nothing (docs/decisions.md, "A Redis
 * outage"). A command waits at most 200 ms: Redis answers in well under a millisecond on a LAN, so
 * that is a stalled or unreachable server, never a busy one. A failed command is not retried and,
 * while there is no connection, not queued either: it fails at once and the caller falls back.
 * Commands cut off by a lost connection are not resent on reconnection (a rate-limit decision
 * replayed later would count twice). The connection itself is retried every second at most, so
 * Redis is found again soon after it is back.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 200
const REDIS_CONNECT_TIMEOUT_MS = 1_000
/** How long every Redis-backed store stays off Redis after a failure before one call tries it again. */
export const REDIS_BREAKER_COOLDOWN_MS = 1_000

const REDIS_OPTIONS: RedisOptions = {
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
  enableOfflineQueue: false,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
}

/**
 * The client every Redis-backed store shares. Without an offline queue a command sent before the
 * first connection is ready fails, so this waits for that connection, or for the first sign that it
 * will not come, before anything uses the client. `onError` hears every connection error.
 */
export async function redisClient(url: string, onError: (error: Error) => void = () => undefined): Promise<Redis> {
  // Loaded only when configured: the client library is a tenth of gw's start-up time.
  const { default: Redis } = await import('ioredis')
  const client = new Redis(url, REDIS_OPTIONS)
  client.on('error', onError)
  await new Promise<void>((resolve) => {
    const settled = () => {
      clearTimeout(timer)
      client.off('ready', settled)
      client.off('error', settled)
      resolve()
    }
    const timer = setTimeout(settled, REDIS_CONNECT_TIMEOUT_MS)
    client.on('ready', settled)
    client.on('error', settled)
  })
  return client
}

export interface RedisStores {
  client: Redis
  /** The one breaker of every store below: an outage seen by one keeps them all off Redis. */
  breaker: CircuitBreaker
  limiterStore: FailoverLimiterStore
  spendStore: FailoverSpendStore
  meta: FailoverMetaStore
  /** Provider keys' cool-downs, seen by every instance. */
  keyHealth: FailoverKeyHealth
  /** Answers kept for identical calls, shared by every instance (a miss while Redis is away). */
  responseCache: RedisResponseCache
  invalidations: RedisInvalidationBus
  probes: HealthProbe[]
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
const degradedIf = (degraded: boolean): ComponentState => (degraded ? 'degraded' : 'ok')

/**
 * The limiter, the metadata store and the invalidation bus on Redis, each falling back in process
 * (the metadata to the request log's records) behind one shared breaker. The log says when Redis goes
 * and when it is back, once each; never the URL, which may hold a password.
 */
export async function openRedisStores(url: string, log: Logger, now: () => number = Date.now): Promise<RedisStores> {
  // The connection's own reason (refused, wrong password) says more than the command it failed.
  let connectionError: string | undefined
  const client = await redisClient(url, (error) => {
    connectionError = error.message
  })
  client.on('ready', () => {
    connectionError = undefined
  })
  const breaker = new CircuitBreaker({
    cooldownMs: REDIS_BREAKER_COOLDOWN_MS,
    now,
    onChange: (open, cause) => {
      if (open)
        log.warn(
          'redis unavailable: limits are enforced per instance, request metadata is read from the request log, provider key cool-downs are kept per instance and credential changes reach this instance only, until it answers again',
          { error: connectionError ?? messageOf(cause) },
        )
      else
        log.info(
          'redis answers again: limits, request metadata, provider key cool-downs and credential changes are shared across instances again',
        )
    },
  })
  if (client.status !== 'ready') breaker.trip(new Error(`no connection (${client.status})`))
  const limiterStore = new FailoverLimiterStore(new RedisLimiterStore(client), new MemoryLimiterStore(now), breaker)
  const spendStore = new FailoverSpendStore(new RedisSpendStore(client), new MemorySpendStore(), breaker)
  const meta = new FailoverMetaStore(new RedisMetaStore(client), breaker)
  const keyHealth = new FailoverKeyHealth(new RedisKeyHealth(client), new MemoryKeyHealth(now), breaker)
  const invalidations = new RedisInvalidationBus(client, log, breaker)
  const responseCache = new RedisResponseCache(client, { breaker })
  // Redis is not required to serve, so each of these degrades the health, never downs it. The Redis
  // probe goes through the breaker too: while it is open the answer is known without asking Redis.
  const probes: HealthProbe[] = [
    { name: 'rate_limiter', required: false, check: async () => degradedIf(limiterStore.degraded) },
    { name: 'budgets', required: false, check: async () => degradedIf(spendStore.degraded) },
    { name: 'metadata', required: false, check: async () => degradedIf(meta.degraded) },
    {
      name: 'redis',
      required: false,
      check: () =>
        breaker.run<ComponentState>(
          async () => ((await client.ping()) === 'PONG' ? 'ok' : 'degraded'),
          async () => 'down',
        ),
    },
  ]
  return { client, breaker, limiterStore, spendStore, meta, keyHealth, responseCache, invalidations, probes }
}

export interface RuntimeOptions {
  migrate: boolean
  /** Serving traffic: the request log is written on a thread of its own (one-shot commands log nothing). */
  serving?: boolean
}

export async function openRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const log = createLogger(config.logLevel)
  const serverSecret = loadServerSecret(config.secret, config.dataDir)
  const vault = new Vault(serverSecret)
  const db = await openDatabase(config)
  if (options.migrate) {
    const applied = [...(db.created ?? []), ...(await migrate(db))]
    if (applied.length > 0) log.info('migrations applied', { dialect: db.dialect, applied: applied.join(',') })
  }
  const store = createStore(db)
  const credentialKey = await loadCredentialKey(store, vault)
  const probes: HealthProbe[] = [
    {
      name: 'database',
      required: true,
      check: async () => {
        await store.ping()
        return 'ok'
      },
    },
  ]
  let meta: MetaStore | undefined
  let limiterStore: LimiterStore = new MemoryLimiterStore()
  let spendStore: SpendStore = new MemorySpendStore()
  let keyHealth: KeyHealth = new MemoryKeyHealth()
  let responseCache: ResponseCache = new MemoryResponseCache({ maxBytes: config.cacheMaxBytes })
  let invalidations: InvalidationBus = new LocalInvalidationBus()
  const redis = config.redisUrl ? await openRedisStores(config.redisUrl, log) : undefined
  if (redis) {
    meta = redis.meta
    limiterStore = redis.limiterStore
    spendStore = redis.spendStore
    keyHealth = redis.keyHealth
    responseCache = redis.responseCache
    invalidations = redis.invalidations
    probes.push(...redis.probes)
  }
  // Outgoing calls (webhooks, integrations): the health check says when the operator switched them off.
  probes.push({ name: 'egress', required: false, check: async () => (config.egress.enabled ? 'ok' : 'off') })
  if (config.clickhouseUrl)
    log.warn('GW_CLICKHOUSE_URL is set, but the ClickHouse analytics store is not built yet; the SQL store serves analytics')
  // Its thread starts with the first batch: started here, it evaluated its modules and opened its
  // connection on the other core while the server was starting to answer.
  const writer = options.serving ? new ThreadedLogWriter(config.database) : undefined
  const requestLog = new RequestLog(writer?.write ?? writeEntries(store), log)
  // Loaded only when configured, and only to serve: with metrics off, prom-client is never read and
  // no call observes; a one-shot command has nothing to be scraped.
  const metrics =
    config.metrics && options.serving
      ? new (await import('./observability/metrics')).GatewayMetrics({ requestLog, probes, outbox: store.deliveries })
      : undefined
  // The same for traces: the OpenTelemetry packages are read only when a collector is named.
  const tracing =
    config.tracing && options.serving ? new (await import('./observability/otel')).OtelTracing(config.tracing, log) : undefined
  return {
    config,
    db,
    deps: {
      store,
      vault,
      credentialKey,
      log,
      probes,
      meta,
      requestLog,
      limiterStore,
      spendStore,
      keyHealth,
      responseCache,
      invalidations,
      usersFeature: config.usersFeature,
      egress: new EgressPolicy(config.egress),
      integrations: config.integrations,
      maxBodyBytes: config.maxBodyBytes,
      globalRateLimit: config.globalRateLimit,
      requestRetentionDays: config.requestRetentionDays,
      metrics,
      metricsToken: config.metrics?.token,
      tracing,
      gateway: {
        providers: config.providers,
        metaTtlSeconds: config.metaTtlSeconds,
        upstreamTimeoutMs: config.upstreamTimeoutSeconds * 1000,
        countryHeader: config.countryHeader,
        publicUrl: config.publicUrl,
      },
    },
    async close() {
      await requestLog.drain()
      // Spans still batched go out before the process ends; a collector that is away costs the export's timeout at most.
      await tracing
        ?.shutdown()
        .catch((error: unknown) => log.warn('tracing: spans not sent at shutdown', { error: String(error) }))
      await writer?.close()
      await invalidations.close()
      redis?.client.disconnect()
      await db.close()
    },
  }
}
