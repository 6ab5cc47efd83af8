import type Redis from 'ioredis'
import { cooldownMs, type KeyHealth } from './key-health'

/**
 * Cool-downs shared by every instance: one key per id, `gw:key-cooldown:<id>`, that Redis expires when
 * the cool-down ends, so nothing needs sweeping and the server's clock is the only one. A read is one
 * round trip for all the ids of a call: EXISTS in one pipeline rather than one MGET, because on a
 * cluster the ids' keys lie in different slots, which MGET refuses.
 */
export class RedisKeyHealth implements KeyHealth {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gw:key-cooldown:',
  ) {}

  async coolingDown(ids: readonly string[]): Promise<ReadonlySet<string>> {
    if (ids.length === 0) return new Set()
    const pipeline = this.redis.pipeline()
    for (const id of ids) pipeline.exists(this.prefix + id)
    const replies = (await pipeline.exec()) ?? []
    const cooling = new Set<string>()
    ids.forEach((id, i) => {
      const [error, exists] = replies[i] ?? [new Error('no reply')]
      // A failed read must reach the breaker, not pass for "not cooling".
      if (error) throw error
      if (exists === 1) cooling.add(id)
    })
    return cooling
  }

  async coolDown(id: string, ms: number): Promise<void> {
    const length = cooldownMs(ms)
    if (length === 0) await this.redis.del(this.prefix + id)
    else await this.redis.set(this.prefix + id, '1', 'PX', length)
  }

  async recovered(id: string): Promise<void> {
    await this.redis.del(this.prefix + id)
  }
}
