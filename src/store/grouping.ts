import type { SQL } from 'drizzle-orm'

/**
 * A computed grouping key: what to GROUP BY and what to SELECT for it. Usually one expression; they
 * differ where grouping by a cheap expression and deriving the shown key once per group is faster
 * (time buckets on Postgres, src/query/time.ts).
 */
export interface Grouping {
  select: SQL
  groupBy: SQL
}

/** A plain expression as a grouping, or a grouping as it is. */
export const grouping = (g: SQL | Grouping): Grouping => ('groupBy' in g ? g : { select: g, groupBy: g })
