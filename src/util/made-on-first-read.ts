/**
 * An object whose every property is made by its function the first time it is read, and is a plain
 * property from then on. For what is costly to make and mostly unused by any one process: drizzle's
 * table objects cost about 10 µs a column in code not yet compiled (5-8 ms for the SQLite schema at
 * start-up), and `gw serve` reads one table before it listens and about a dozen on its first calls;
 * the store's repositories are made over them the same way.
 */
export type MadeOnFirstRead<D extends Record<string, () => unknown>> = { readonly [K in keyof D]: ReturnType<D[K]> }

export function madeOnFirstRead<D extends Record<string, () => unknown>>(makers: D): MadeOnFirstRead<D> {
  const made = {} as Record<keyof D, unknown>
  for (const name of Object.keys(makers) as Array<keyof D>) {
    Object.defineProperty(made, name, {
      enumerable: true,
      configurable: true,
      get() {
        const value = makers[name]?.()
        // Read often on a call's path: as a value, a read costs what any property's does.
        Object.defineProperty(made, name, { value, enumerable: true, configurable: false, writable: false })
        return value
      },
    })
  }
  return made as MadeOnFirstRead<D>
}
