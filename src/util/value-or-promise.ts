/**
 * What a cached read returns: the value itself when the cache holds it, a promise only when it must be
 * read. A caller awaits only the promise: `await` on a value still costs a promise job, and the hot path
 * makes a dozen such reads a call. Callers tell the two apart with `instanceof Promise`, so the promise
 * must be a native one: return an `async` function's result or a `.then` of one, never a query
 * builder's thenable (drizzle's implements Promise without being one).
 */
export type ValueOrPromise<T> = T | Promise<T>
