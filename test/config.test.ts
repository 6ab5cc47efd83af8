import { describe, expect, test } from 'bun:test'
import { ConfigError, describeVariables, loadConfig, retiredVariables } from '../src/config'

describe('configuration from the environment', () => {
  test('an empty environment gives the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 8787,
      dataDir: './gw-data',
      database: { kind: 'sqlite', path: './gw-data/gw.db' },
      metaTtlSeconds: 300,
      globalRateLimit: { requests: 1000, windowSeconds: 60 },
      logLevel: 'info',
    })
    expect(config.redisUrl).toBeUndefined()
    expect(config.secret).toBeUndefined()
  })

  test('each variable is read', () => {
    const config = loadConfig({
      GW_HOST: '0.0.0.0',
      GW_PORT: '9000',
      GW_DATA_DIR: '/var/lib/gw',
      GW_DATABASE_URL: 'postgres://u@db:5432/gw',
      GW_REDIS_URL: 'redis://cache:6379',
      GW_SECRET: 'x'.repeat(32),
      GW_META_TTL_SECONDS: '60',
      GW_GLOBAL_RATE_LIMIT: '50/10',
      OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1',
      GW_COUNTRY_HEADER: 'CF-IPCountry',
    })
    expect(config).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      database: { kind: 'postgres', url: 'postgres://u@db:5432/gw' },
      redisUrl: 'redis://cache:6379',
      metaTtlSeconds: 60,
      globalRateLimit: { requests: 50, windowSeconds: 10 },
      providers: { openai: { baseUrl: 'http://127.0.0.1:8000/v1' } },
      countryHeader: 'cf-ipcountry',
    })
  })

  test('GW_REQUEST_RETENTION_DAYS: unset keeps records forever; set, it is a number of days', () => {
    expect(loadConfig({}).requestRetentionDays).toBeUndefined()
    expect(loadConfig({ GW_REQUEST_RETENTION_DAYS: '' }).requestRetentionDays).toBeUndefined()
    expect(loadConfig({ GW_REQUEST_RETENTION_DAYS: '90' }).requestRetentionDays).toBe(90)
    expect(loadConfig({ GW_REQUEST_RETENTION_DAYS: '3650' }).requestRetentionDays).toBe(3650)
  })

  test('a retired variable is named with why it is ignored, and changes nothing else', () => {
    expect(retiredVariables({ GW_META_MAX_ENTRIES: '50000', GW_PORT: '9000' })).toEqual([
      { name: 'GW_META_MAX_ENTRIES', why: expect.stringContaining('request log') },
    ])
    expect(retiredVariables({})).toEqual([])
    expect(loadConfig({ GW_META_MAX_ENTRIES: '50000' })).toEqual(loadConfig({}))
  })

  test('GW_PUBLIC_URL is kept without a trailing slash', () => {
    expect(loadConfig({ GW_PUBLIC_URL: 'https://gw.example.com/' }).publicUrl).toBe('https://gw.example.com')
  })

  test('sqlite: URLs name a file', () => {
    expect(loadConfig({ GW_DATABASE_URL: 'sqlite:/tmp/x.db' }).database).toEqual({ kind: 'sqlite', path: '/tmp/x.db' })
  })

  const bad: Array<[string, string, string]> = [
    ['GW_PORT', 'abc', 'integer port'],
    ['GW_PORT', '70000', 'integer port'],
    ['GW_DATABASE_URL', 'mysql://root@db/gw', 'postgres://'],
    ['GW_REDIS_URL', 'http://cache', 'redis://'],
    ['GW_SECRET', 'short', '32 characters'],
    ['GW_META_TTL_SECONDS', '0', 'positive integer'],
    ['GW_GLOBAL_RATE_LIMIT', '1000', '<requests>/<seconds>'],
    ['GW_LOG_LEVEL', 'loud', 'debug, info, warn or error'],
    ['GW_COUNTRY_HEADER', 'x country', 'request header'],
    ['GW_PUBLIC_URL', 'gw.example.com', 'http(s)://'],
    ['GW_EGRESS', 'maybe', 'on or off'],
    ['GW_SLACK_API_URL', 'slack.com/api', 'http(s)://'],
    ['GW_STRIPE_API_URL', 'ftp://api.stripe.com', 'http(s)://'],
    ['GW_EGRESS_ALLOW_HOSTS', '10.0.0.0/33', 'CIDRs'],
    ['GW_EGRESS_ALLOW_HOSTS', 'hooks.internal, bad host', 'CIDRs'],
    ['GW_REQUEST_RETENTION_DAYS', '0', 'from 1 to 3650'],
    ['GW_REQUEST_RETENTION_DAYS', '-7', 'from 1 to 3650'],
    ['GW_REQUEST_RETENTION_DAYS', '7.5', 'from 1 to 3650'],
    ['GW_REQUEST_RETENTION_DAYS', '30d', 'from 1 to 3650'],
    ['GW_REQUEST_RETENTION_DAYS', '3651', 'from 1 to 3650'],
  ]
  for (const [variable, value, allowed] of bad) {
    test(`${variable}=${value} is refused, naming the variable and what is allowed`, () => {
      let caught: unknown
      try {
        loadConfig({ [variable]: value })
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(ConfigError)
      const message = (caught as ConfigError).message
      expect(message).toStartWith(`${variable}=`)
      expect(message).toContain(allowed)
      expect(message).not.toContain('\n')
    })
  }

  test("the README's environment table lists every variable", async () => {
    const readme = await Bun.file(new URL('../README.md', import.meta.url)).text()
    expect(describeVariables().filter((v) => !readme.includes(`\`${v.name}\``))).toEqual([])
  })
})
