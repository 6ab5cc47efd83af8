import type Redis from 'ioredis'
import type { AppDeps } from './app'
import { type InvalidationBus, LocalInvalidationBus, RedisInvalidationBus } from './auth/invalidation'
import { loadCredentialKey } from './auth/secret-rotation'
import { loadServerSecret } from './auth/server-secret'
import type { Config } from './config'
import { ThreadedLogWriter, writeEntries } from './gateway/log-writer'
import { MemoryMetaStore, type MetaStore, RedisMetaStore } from './gateway/meta/store'
import { RequestLog } from './gateway/request-log'
import { FailoverLimiterStore } from './limits/failover-store'
import { RedisLimiterStore } from './limits/redis-store'
import { type LimiterStore, MemoryLimiterStore } from './limits/store'
import { createLogger, type Logger } from './log'
import type { HealthProbe } from './modules/health/service'
import { type Database, openDatabase } from './store/database'
import { migrate } from './store/migrate'
import { createStore } from './store/store'

/** What a running gw holds open: built once by `gw serve` and by each CLI command, closed on exit. */
export interface Runtime {
  config: Config
  db: Database
  deps: AppDeps
  /** Writes what is still queued, then closes connections; for shutdown. */
  close(): Promise<void>
}

async function connectRedis(url: string, log: Logger): Promise<Redis> {
  // Loaded only when configured: the client library is a tenth of gw's start-up time.
  const { default: Redis } = await import('ioredis')
  // Commands fail fast while Redis is away instead of queueing without bound; callers fall back.
  const client = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1_000 })
  let down = false
  client.on('error', (error: Error) => {
    if (!down) log.warn('redis unreachable', { error: error.message })
    down = true
  })
  client.on('ready', () => {
    if (down) log.info('redis reachable again')
    down = false
  })
  return client
}

export interface RuntimeOptions {
  migrate: boolean
  /** Serving traffic: the request log is written on a thread of its own (one-shot commands log nothing). */
  serving?: boolean
}

export async function openRuntime(config: Config, options: RuntimeOptions): Promise<Runtime> {
  const log = createLogger(config.logLevel)
  const serverSecret = loadServerSecret(config.secret, config.dataDir)
  const db = await openDatabase(config)
  if (options.migrate) {
    const applied = await migrate(db, db.migrations)
    if (applied.length > 0) log.info('migrations applied', { dialect: db.dialect, applied: applied.join(',') })
  }
  const store = createStore(db)
  const credentialKey = await loadCredentialKey(store, serverSecret)
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
  let meta: MetaStore = new MemoryMetaStore()
  let limiterStore: LimiterStore = new MemoryLimiterStore()
  let invalidations: InvalidationBus = new LocalInvalidationBus()
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, log) : undefined
  if (redis) {
    meta = new RedisMetaStore(redis)
    invalidations = new RedisInvalidationBus(redis, log)
    const limiter = new FailoverLimiterStore(new RedisLimiterStore(redis), new MemoryLimiterStore(), log)
    limiterStore = limiter
    probes.push({ name: 'rate_limiter', required: false, check: async () => (limiter.degraded ? 'degraded' : 'ok') })
    // Redis is not required to serve, so it degrades the health, never downs it.
    probes.push({ name: 'redis', required: false, check: async () => ((await redis.ping()) === 'PONG' ? 'ok' : 'degraded') })
  }
  if (config.clickhouseUrl)
    log.warn('GW_CLICKHOUSE_URL is set, but the ClickHouse analytics store is not built yet; the SQL store serves analytics')
  const writer = options.serving ? new ThreadedLogWriter(config.database) : undefined
  // Not awaited: the thread opens its connection while the server starts; a batch waits for it.
  writer
    ?.start()
    .catch((error: unknown) => log.error('the request log writer could not open the database', { error: String(error) }))
  const requestLog = new RequestLog(writer?.write ?? writeEntries(store), log)
  return {
    config,
    db,
    deps: {
      store,
      serverSecret,
      credentialKey,
      log,
      probes,
      meta,
      requestLog,
      limiterStore,
      invalidations,
      usersFeature: config.usersFeature,
      globalRateLimit: config.globalRateLimit,
      gateway: {
        providers: config.providers,
        metaTtlSeconds: config.metaTtlSeconds,
        upstreamTimeoutMs: config.upstreamTimeoutSeconds * 1000,
        countryHeader: config.countryHeader,
      },
    },
    async close() {
      await requestLog.drain()
      await writer?.close()
      await invalidations.close()
      redis?.disconnect()
      await db.close()
    },
  }
}
