/**
 * The schema's tables, each made by its definition the first time it is read and kept from then on.
 * Making drizzle's table objects is most of what evaluating a schema costs (about 10 µs a column in
 * code not yet compiled: 5-8 ms for the whole SQLite schema at start-up), and `gw serve` needs a
 * handful of the tables to start and to answer its first calls; the rest are made when a route or a
 * job first uses them.
 */
export type LazyTables<D extends Record<string, () => object>> = { readonly [K in keyof D]: ReturnType<D[K]> }

export function lazyTables<D extends Record<string, () => object>>(definitions: D): LazyTables<D> {
  const tables = {} as Record<keyof D, unknown>
  for (const name of Object.keys(definitions) as Array<keyof D>) {
    Object.defineProperty(tables, name, {
      enumerable: true,
      configurable: true,
      get() {
        const table = definitions[name]?.()
        // From now on a plain property: reading a made table costs what reading any property does.
        Object.defineProperty(tables, name, { value: table, enumerable: true, configurable: false, writable: false })
        return table
      },
    })
  }
  return tables as LazyTables<D>
}
