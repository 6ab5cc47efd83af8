import type { ValueOrPromise } from './value-or-promise'

/** A held value is reloaded in the background once this share of its time is up (see `held`). */
const RELOAD_AHEAD_AT = 0.75

/**
 * Every entry is made with all its fields, `reloading` included: `held` runs inlined into the hottest
 * functions of a call, and an entry that gained a field later had a shape that code had not seen, so
 * each reload threw the optimised code away (JavaScriptCore's log of its compiles showed them compiled
 * again and again under steady traffic).
 */
interface Entry<V> {
  value: V
  expiresAt: number
  /** A background reload of this entry is under way. */
  reloading: boolean
}

/**
 * A bounded map whose entries lapse after `ttlMs`. When full, the oldest entry goes first (a Map keeps
 * insertion order), so memory stays bounded whatever the traffic.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>()

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
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs, reloading: false })
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
   * no promise. A load that fails is not kept, and one overtaken by a `delete` is not held. A held
   * value is reloaded in the background in the last quarter of its time (it is answered meanwhile), so
   * that steady traffic never waits on a reload (with 1-second caches on a call's path, a call a
   * second waited on each of their database reads); a value is still never served past its time.
   */
  held<T>(this: TtlCache<K, T | Promise<T>>, key: K, loader: () => Promise<T>): ValueOrPromise<T> {
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      const now = this.now()
      if (entry.expiresAt > now) {
        if (!entry.reloading && !(entry.value instanceof Promise) && now >= entry.expiresAt - this.ttlMs * (1 - RELOAD_AHEAD_AT))
          this.reload(key, entry as Entry<T>, loader)
        return entry.value
      }
      this.entries.delete(key)
    }
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

  /** Replaces a held value with a fresh load, unless the entry was deleted or replaced meanwhile; a failed reload leaves it as it was. */
  private reload<T>(this: TtlCache<K, T | Promise<T>>, key: K, entry: Entry<T>, loader: () => Promise<T>): void {
    entry.reloading = true
    // A loader that throws at once fails like one that rejects.
    new Promise<T>((resolve) => resolve(loader())).then(
      (value) => {
        if (this.entries.get(key) === entry) this.set(key, value)
      },
      () => {
        entry.reloading = false
      },
    )
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  get size(): number {
    return this.entries.size
  }
}
