/**
 * What a cached read returns: the value itself when the cache holds it, a promise only when it must be
 * read. A caller awaits only the promise: `await` on a value still costs a promise job, and the hot path
 * makes a dozen such reads a call.
 */
export type ValueOrPromise<T> = T | Promise<T>
