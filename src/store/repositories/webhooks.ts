import { and, asc, desc, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { childrenOf, orgRows } from '../scope'

export interface Webhook {
  id: string
  orgId: string
  destination: string
  events: string[]
  sampleRate: number
  propertyFilters: Record<string, string>
  includeData: boolean
  sealedSecret: string
  secretPrefix: string
  disabledAt: Date | null
  droppedEvents: number
  createdAt: Date
}

export type DeliveryStatus = 'pending' | 'delivered' | 'dead'

export interface Delivery {
  id: string
  webhookId: string
  orgId: string
  event: string
  payload: string
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: Date
  leaseUntil: Date | null
  lastHttpStatus: number | null
  lastError: string | null
  lastAttemptAt: Date | null
  createdAt: Date
}

/** A delivery as it enters the outbox: not attempted yet. */
export type NewDelivery = Omit<Delivery, 'attempts' | 'leaseUntil' | 'lastHttpStatus' | 'lastError' | 'lastAttemptAt'>

/** One organisation's webhooks, and what was sent to them. */
export const webhooksRepository = ({ orm, tables: { webhooks, webhookDeliveries } }: Database, orgId: string) => {
  const hook = orgRows(webhooks, orgId)
  return {
    async add(fields: Omit<Webhook, 'orgId' | 'disabledAt' | 'droppedEvents'>): Promise<void> {
      await orm.insert(webhooks).values(hook.row(fields))
    },
    async list(): Promise<Webhook[]> {
      return orm.select().from(webhooks).where(hook.where()).orderBy(asc(webhooks.createdAt), asc(webhooks.id))
    },
    async get(id: string): Promise<Webhook | undefined> {
      const [row] = await orm
        .select()
        .from(webhooks)
        .where(hook.where(eq(webhooks.id, id)))
        .limit(1)
      return row
    },
    async remove(id: string): Promise<boolean> {
      const rows = await orm
        .delete(webhooks)
        .where(hook.where(eq(webhooks.id, id)))
        .returning({ id: webhooks.id })
      return rows.length === 1
    },
    /** The latest deliveries of the organisation's webhooks (of one, when named), newest first. */
    async deliveries(limit: number, webhookId?: string): Promise<Delivery[]> {
      return orm
        .select()
        .from(webhookDeliveries)
        .where(childrenOf(orm, webhookDeliveries.webhookId, hook, webhookId))
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(limit)
    },
    /** Per webhook, its latest delivery. */
    async lastDeliveries(): Promise<Map<string, Delivery>> {
      const latest = orm
        .select({ webhookId: webhookDeliveries.webhookId, at: sql`max(${webhookDeliveries.createdAt})`.as('at') })
        .from(webhookDeliveries)
        .where(childrenOf(orm, webhookDeliveries.webhookId, hook))
        .groupBy(webhookDeliveries.webhookId)
        .as('latest')
      const rows = await orm
        .select({ delivery: webhookDeliveries })
        .from(webhookDeliveries)
        .innerJoin(latest, and(eq(latest.webhookId, webhookDeliveries.webhookId), eq(latest.at, webhookDeliveries.createdAt)))
      return new Map(rows.map(({ delivery }) => [delivery.webhookId, delivery]))
    },
  }
}

/**
 * The outbox, across organisations: filled by the request log's writer and by the routes that emit
 * events, emptied by the deliverer of every instance. Claims are leases: an attempt is taken by one
 * instance at a time, and one that died with it is taken again when its lease has run out.
 */
export const deliveriesRepository = ({ orm, dialect, tables: { webhooks, webhookDeliveries } }: Database) => ({
  /** Every webhook of every organisation: for re-sealing their secrets under a new server secret. */
  async allWebhooks(): Promise<Webhook[]> {
    return orm.select().from(webhooks)
  },
  async resealWebhook(id: string, sealedSecret: string): Promise<void> {
    await orm.update(webhooks).set({ sealedSecret }).where(eq(webhooks.id, id))
  },
  /** The enabled webhooks of these organisations that take an event. */
  async subscribers(orgIds: readonly string[], event: string): Promise<Webhook[]> {
    if (orgIds.length === 0) return []
    const rows = await orm
      .select()
      .from(webhooks)
      .where(and(inArray(webhooks.orgId, [...orgIds]), isNull(webhooks.disabledAt)))
    return rows.filter((row) => row.events.includes(event))
  },
  async enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
    for (let i = 0; i < deliveries.length; i += 500)
      await orm.insert(webhookDeliveries).values(deliveries.slice(i, i + 500) as Delivery[])
  },
  /** A delivery made outside the outbox (a test sent at once), kept with the others to be seen. */
  async record(delivery: Delivery): Promise<void> {
    await orm.insert(webhookDeliveries).values(delivery)
  },
  /**
   * Takes up to `limit` attempts that are due and not held by another instance, holding them until
   * `leaseUntil`. The conditions are checked again on each row as it is updated, so two instances
   * never take one attempt; on Postgres the rows another instance is taking are skipped, not waited for.
   */
  async claim(now: Date, leaseUntil: Date, limit: number): Promise<Array<{ delivery: Delivery; webhook: Webhook }>> {
    const due = and(
      eq(webhookDeliveries.status, 'pending'),
      lte(webhookDeliveries.nextAttemptAt, now),
      or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
    )
    // On Postgres, rows another instance is taking right now are skipped rather than waited for.
    const skipTaken = dialect === 'postgres' ? sql` for update skip locked` : sql``
    const claimed = await orm
      .update(webhookDeliveries)
      .set({ leaseUntil })
      .where(
        and(
          sql`${webhookDeliveries.id} in (select ${webhookDeliveries.id} from ${webhookDeliveries} where ${due} order by ${webhookDeliveries.nextAttemptAt} limit ${limit}${skipTaken})`,
          due,
        ),
      )
      .returning()
    if (claimed.length === 0) return []
    const hooks = await orm
      .select()
      .from(webhooks)
      .where(
        inArray(
          webhooks.id,
          claimed.map((delivery) => delivery.webhookId),
        ),
      )
    const byId = new Map(hooks.map((hook) => [hook.id, hook]))
    return claimed.flatMap((delivery) => {
      const webhook = byId.get(delivery.webhookId)
      return webhook ? [{ delivery, webhook }] : []
    })
  },
  /** What one attempt came to: the delivery's new state, written only while the lease is still this instance's. */
  async settle(
    id: string,
    lease: Date,
    outcome: Pick<Delivery, 'status' | 'attempts' | 'nextAttemptAt' | 'lastHttpStatus' | 'lastError' | 'lastAttemptAt'>,
  ): Promise<boolean> {
    const rows = await orm
      .update(webhookDeliveries)
      .set({ ...outcome, leaseUntil: null })
      .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.leaseUntil, lease)))
      .returning({ id: webhookDeliveries.id })
    return rows.length === 1
  },
  /** A destination that answered 410 Gone: it gets nothing more, and what waited for it is dead. */
  async disable(webhookId: string, at: Date): Promise<void> {
    await orm.update(webhooks).set({ disabledAt: at }).where(eq(webhooks.id, webhookId))
    await orm
      .update(webhookDeliveries)
      .set({ status: 'dead', lastError: 'the destination answered 410 Gone: the webhook is disabled', leaseUntil: null })
      .where(and(eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, 'pending')))
  },
  /**
   * Keeps each webhook's pending `request.completed` events to `cap`, dropping the oldest beyond it and
   * counting them on the webhook. Other events are never dropped. Answers how many were dropped.
   */
  async trim(cap: number, droppable: string): Promise<number> {
    const crowded = await orm
      .select({ webhookId: webhookDeliveries.webhookId, pending: sql<number>`count(*)` })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'pending'), eq(webhookDeliveries.event, droppable)))
      .groupBy(webhookDeliveries.webhookId)
      .having(sql`count(*) > ${cap}`)
    let dropped = 0
    for (const { webhookId, pending } of crowded) {
      const excess = Number(pending) - cap
      const oldest = orm
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.webhookId, webhookId),
            eq(webhookDeliveries.status, 'pending'),
            eq(webhookDeliveries.event, droppable),
            isNull(webhookDeliveries.leaseUntil),
          ),
        )
        .orderBy(asc(webhookDeliveries.createdAt))
        .limit(excess)
      const gone = await orm
        .delete(webhookDeliveries)
        .where(inArray(webhookDeliveries.id, oldest))
        .returning({ id: webhookDeliveries.id })
      await orm
        .update(webhooks)
        .set({ droppedEvents: sql`${webhooks.droppedEvents} + ${gone.length}` })
        .where(eq(webhooks.id, webhookId))
      dropped += gone.length
    }
    return dropped
  },
})
