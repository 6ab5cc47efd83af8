import type Redis from 'ioredis'
import type { Logger } from '../log'
import { CircuitBreaker } from '../util/breaker'

/**
 * Tells every instance that a credential changed (revoked, rescoped, expiry moved), so each drops it
 * from its credential cache at once instead of at the cache's one-second lapse. In process it reaches
 * only this instance; with Redis it reaches all of them through pub/sub.
 */
export interface InvalidationBus {
  publish(credentialKey: string): Promise<void>
  subscribe(listener: (credentialKey: string) => void): void
  close(): Promise<void>
}

export class LocalInvalidationBus implements InvalidationBus {
  private readonly listeners: Array<(key: string) => void> = []

  async publish(credentialKey: string): Promise<void> {
    for (const listener of this.listeners) listener(credentialKey)
  }

  subscribe(listener: (credentialKey: string) => void): void {
    this.listeners.push(listener)
  }

  async close(): Promise<void> {}
}

const CHANNEL = 'gw:invalidate:credentials'

export class RedisInvalidationBus implements InvalidationBus {
  private readonly local = new LocalInvalidationBus()
  private readonly subscriber: Redis

  /**
   * `publisher` is the shared client; subscribing needs a connection of its own (Redis's rule). The
   * breaker is the one the other Redis-backed stores share, so an outage seen by any of them spares
   * this one the attempt too.
   */
  constructor(
    private readonly publisher: Redis,
    log: Logger,
    private readonly breaker: CircuitBreaker = new CircuitBreaker(),
  ) {
    // Subscribed again on every connection, by this bus rather than by ioredis's own resubscription,
    // whose failure (the connection closed again as it came back) nobody could catch.
    this.subscriber = publisher.duplicate({ autoResubscribe: false })
    this.subscriber.on('error', () => undefined)
    this.subscriber.on('message', (_channel: string, message: string) => void this.local.publish(message))
    this.subscriber.on('ready', () => {
      this.subscriber
        .subscribe(CHANNEL)
        .catch((error: unknown) => log.warn('credential invalidation: subscribe failed', { error: String(error) }))
    })
  }

  async publish(credentialKey: string): Promise<void> {
    // This instance forgets at once whatever Redis does; while Redis is away the others miss the
    // message and catch up at their credential cache's one-second lapse.
    await this.local.publish(credentialKey)
    await this.breaker.run(
      async () => void (await this.publisher.publish(CHANNEL, credentialKey)),
      async () => undefined,
    )
  }

  subscribe(listener: (credentialKey: string) => void): void {
    this.local.subscribe(listener)
  }

  async close(): Promise<void> {
    this.subscriber.disconnect()
  }
}
