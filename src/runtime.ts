import Redis from 'ioredis'
import type { AppDeps } from './app'
import { type InvalidationBus, LocalInvalidationBus, RedisInvalidationBus } from './auth/invalidation'
import { loadCredentialKey } from './auth/secret-rotation'
import { loadServerSecret } from './auth/server-secret'
import type { Config } from './config'
import { MemoryMetaStore, type MetaStore, RedisMetaStore } from './gateway/meta/store'
import { persistEntries, RequestLog } from './gateway/request-log'
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

function connectRedis(url: string, log: Logger): Redis {
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

export async function openRuntime(config: Config, options: { migrate: boolean }): Promise<Runtime> {
  const log = createLogger(config.logLevel)
  const serverSecret = loadServerSecret(config.secret, config.dataDir)
  const db = openDatabase(config)
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
  const redis = config.redisUrl ? connectRedis(config.redisUrl, log) : undefined
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
  const requestLog = new RequestLog(persistEntries(store), log)
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
      await invalidations.close()
      redis?.disconnect()
      await db.close()
    },
  }
}
