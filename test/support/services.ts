import postgres from 'postgres'

/**
 * The external services the suite runs against. Locally a missing URL skips those suites; with
 * GW_TEST_REQUIRE_SERVICES=1 (CI) a missing or unreachable service fails the run instead.
 */
const required = process.env.GW_TEST_REQUIRE_SERVICES === '1'

export function serviceUrl(variable: 'GW_TEST_DATABASE_URL' | 'GW_TEST_REDIS_URL'): string | undefined {
  const url = process.env[variable]
  if (url) return url
  if (required) throw new Error(`${variable} is not set, but GW_TEST_REQUIRE_SERVICES=1 requires it`)
  return undefined
}

export interface ScratchDatabase {
  url: string
  drop(): Promise<void>
}

/** A new, empty Postgres database for one test file, dropped afterwards. */
export async function scratchPostgres(baseUrl: string): Promise<ScratchDatabase> {
  const name = `gw_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(baseUrl, { max: 1, onnotice: () => undefined })
  await admin.unsafe(`CREATE DATABASE "${name}"`)
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await admin.end({ timeout: 5 })
    },
  }
}
