import type { ValueOrPromise } from './value-or-promise'

/**
 * A bounded map whose entries lapse after `ttlMs`. When full, the oldest entry goes first (a Map keeps
 * insertion order), so memory stays bounded whatever the traffic.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>()

  constructor(
    private readonly maxEntries: number,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  set(key: K, value: V): void {
    this.entries.delete(key)
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs })
  }

  /**
   * The value under `key`, loaded once for every caller that asks while it loads: the cache holds the
   * load's promise. A load that fails is not kept, so the next call loads again.
   */
  load<T>(this: TtlCache<K, Promise<T>>, key: K, loader: () => Promise<T>): Promise<T> {
    const found = this.get(key)
    if (found) return found
    const loading = loader()
    this.set(key, loading)
    loading.catch(() => {
      if (this.get(key) === loading) this.delete(key)
    })
    return loading
  }

  /**
   * The value under `key`, at once when it is held; otherwise loaded once for every caller that asks
   * while it loads (they share the load's promise), then held as the value itself, so later reads take
   * no promise. A load that fails is not kept, and one overtaken by a `delete` is not held.
   */
  held<T>(this: TtlCache<K, T | Promise<T>>, key: K, loader: () => Promise<T>): ValueOrPromise<T> {
    const found = this.get(key)
    if (found !== undefined) return found
    const loading = loader()
    this.set(key, loading)
    loading.then(
      (value) => {
        if (this.get(key) === loading) this.set(key, value)
      },
      () => {
        if (this.get(key) === loading) this.delete(key)
      },
    )
    return loading
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  get size(): number {
    return this.entries.size
  }
}
