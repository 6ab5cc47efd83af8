import Redis from 'ioredis'
import { loadServerSecret } from './auth/server-secret'
import type { Config } from './config'
import { createLogger, type Logger } from './log'
import type { HealthProbe } from './modules/health/service'
import { type Database, openDatabase } from './store/database'
import { migrate } from './store/migrate'
import { createStore, type Store } from './store/store'

/** What a running gw holds open: built once by `gw serve` and by each CLI command, closed on exit. */
export interface Runtime {
  config: Config
  log: Logger
  db: Database
  store: Store
  serverSecret: string
  probes: HealthProbe[]
  close(): Promise<void>
}

function redisProbe(url: string, log: Logger): { probe: HealthProbe; close: () => Promise<void> } {
  // Redis is not required to serve: without it the in-process stores carry on, so it degrades, never downs.
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 })
  let reported = false
  client.on('error', (error: Error) => {
    if (!reported) log.warn('redis unreachable; continuing with in-process state', { error: error.message })
    reported = true
  })
  client.on('ready', () => {
    reported = false
  })
  client.connect().catch(() => undefined)
  return {
    probe: { name: 'redis', required: false, check: async () => ((await client.ping()) === 'PONG' ? 'ok' : 'degraded') },
    close: async () => {
      client.disconnect()
    },
  }
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
  const databaseProbe: HealthProbe = {
    name: 'database',
    required: true,
    check: async () => {
      await store.ping()
      return 'ok'
    },
  }
  const probes: HealthProbe[] = [databaseProbe]
  const closers: Array<() => Promise<void>> = []
  if (config.redisUrl) {
    const redis = redisProbe(config.redisUrl, log)
    probes.push(redis.probe)
    closers.push(redis.close)
  }
  if (config.clickhouseUrl)
    log.warn('GW_CLICKHOUSE_URL is set, but the ClickHouse analytics store is not built yet; the SQL store serves analytics')
  return {
    config,
    log,
    db,
    store,
    serverSecret,
    probes,
    async close() {
      for (const close of closers) await close()
      await db.close()
    },
  }
}
