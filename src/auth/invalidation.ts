import type Redis from 'ioredis'
import type { Logger } from '../log'

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

  /** `publisher` is the shared client; subscribing needs a connection of its own (Redis's rule). */
  constructor(
    private readonly publisher: Redis,
    private readonly log: Logger,
  ) {
    this.subscriber = publisher.duplicate()
    this.subscriber.on('error', () => undefined)
    this.subscriber.on('message', (_channel: string, message: string) => void this.local.publish(message))
    this.subscriber
      .subscribe(CHANNEL)
      .catch((error: unknown) => log.warn('credential invalidation: subscribe failed', { error: String(error) }))
  }

  async publish(credentialKey: string): Promise<void> {
    // This instance forgets at once whatever Redis does; the others rely on the message, or on the
    // one-second cache lapse when Redis is away.
    await this.local.publish(credentialKey)
    await this.publisher.publish(CHANNEL, credentialKey).catch((error: unknown) => {
      this.log.warn('credential invalidation not published; other instances catch up within a second', { error: String(error) })
    })
  }

  subscribe(listener: (credentialKey: string) => void): void {
    this.local.subscribe(listener)
  }

  async close(): Promise<void> {
    this.subscriber.disconnect()
  }
}
