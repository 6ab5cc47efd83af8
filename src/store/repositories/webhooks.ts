import { and, asc, desc, eq, inArray, isNotNull, isNull, lte, or, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../database'
import { childrenOf, orgRows } from '../scope'
import type { Integration } from './integrations'

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
  /** Where it goes: a webhook, or an integration (exactly one of the two is set). */
  webhookId: string | null
  integrationId: string | null
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

/** A delivery taken to be sent, with where it goes. */
export type ClaimedDelivery = { delivery: Delivery; webhook: Webhook } | { delivery: Delivery; integration: Integration }

/** A delivery as it enters the outbox: not attempted yet. */
export type NewDelivery = Omit<Delivery, 'attempts' | 'leaseUntil' | 'lastHttpStatus' | 'lastError' | 'lastAttemptAt'>

/** One organisation's webhooks, and what was sent to them. */
export const webhooksRepository = ({ orm, tables: { webhooks, outbox } }: Database, orgId: string) => {
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
        .from(outbox)
        .where(childrenOf(orm, outbox.webhookId, hook, webhookId))
        .orderBy(desc(outbox.createdAt), desc(outbox.id))
        .limit(limit)
    },
    /** Per webhook, its latest delivery. */
    async lastDeliveries(): Promise<Map<string | null, Delivery>> {
      const latest = orm
        .select({ webhookId: outbox.webhookId, at: sql`max(${outbox.createdAt})`.as('at') })
        .from(outbox)
        .where(childrenOf(orm, outbox.webhookId, hook))
        .groupBy(outbox.webhookId)
        .as('latest')
      const rows = await orm
        .select({ delivery: outbox })
        .from(outbox)
        .innerJoin(latest, and(eq(latest.webhookId, outbox.webhookId), eq(latest.at, outbox.createdAt)))
      return new Map(rows.map(({ delivery }) => [delivery.webhookId, delivery]))
    },
  }
}

/**
 * The outbox, across organisations: filled by the request log's writer and by the routes that emit
 * events, emptied by the deliverer of every instance. Claims are leases: an attempt is taken by one
 * instance at a time, and one that died with it is taken again when its lease has run out.
 */
export const deliveriesRepository = ({ orm, dialect, tables: { webhooks, outbox, integrations } }: Database) => {
  const enabledWebhooksOf = (organizations: SQL) =>
    orm
      .select()
      .from(webhooks)
      .where(and(organizations, isNull(webhooks.disabledAt)))
  // The request log's writer reads these in every batch: on SQLite the query is built and compiled once
  // and run for each organisation of the batch (rarely more than a few), not anew by drizzle and SQLite.
  let enabledWebhooksOfOne: ReturnType<ReturnType<typeof enabledWebhooksOf>['prepare']> | undefined
  return {
    /** Every webhook of every organisation: for re-sealing their secrets under a new server secret. */
    async allWebhooks(): Promise<Webhook[]> {
      return orm.select().from(webhooks)
    },
    async resealWebhook(id: string, sealedSecret: string): Promise<void> {
      await orm.update(webhooks).set({ sealedSecret }).where(eq(webhooks.id, id))
    },
    /** The switched-on integrations of one type of these organisations. */
    async activeIntegrations(orgIds: readonly string[], type: Integration['type']): Promise<Integration[]> {
      if (orgIds.length === 0) return []
      return orm
        .select()
        .from(integrations)
        .where(and(inArray(integrations.orgId, [...orgIds]), eq(integrations.type, type), eq(integrations.active, true)))
    },
    /** The enabled webhooks of these organisations that take an event. */
    async subscribers(orgIds: readonly string[], event: string): Promise<Webhook[]> {
      if (orgIds.length === 0) return []
      let rows: Webhook[]
      if (dialect === 'sqlite') {
        enabledWebhooksOfOne ??= enabledWebhooksOf(eq(webhooks.orgId, sql.placeholder('orgId'))).prepare()
        const ofOne = enabledWebhooksOfOne
        rows = orgIds.flatMap((orgId) => ofOne.all({ orgId }))
      } else rows = await enabledWebhooksOf(inArray(webhooks.orgId, [...orgIds]))
      return rows.filter((row) => row.events.includes(event))
    },
    async enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
      for (let i = 0; i < deliveries.length; i += 500) await orm.insert(outbox).values(deliveries.slice(i, i + 500) as Delivery[])
    },
    /** A delivery made outside the outbox (a test sent at once), kept with the others to be seen. */
    async record(delivery: Delivery): Promise<void> {
      await orm.insert(outbox).values(delivery)
    },
    /**
     * Takes up to `limit` attempts that are due and not held by another instance, holding them until
     * `leaseUntil`. The conditions are checked again on each row as it is updated, so two instances
     * never take one attempt; on Postgres the rows another instance is taking are skipped, not waited for.
     */
    async claim(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
      const due = and(
        eq(outbox.status, 'pending'),
        lte(outbox.nextAttemptAt, now),
        or(isNull(outbox.leaseUntil), lte(outbox.leaseUntil, now)),
      )
      // A read first: with nothing due, as is usual, no write is made, so the deliverer's pass takes no
      // write lock from the request log's writer (SQLite has one writer at a time).
      const [anyDue] = await orm.select({ id: outbox.id }).from(outbox).where(due).limit(1)
      if (!anyDue) return []
      // On Postgres, rows another instance is taking right now are skipped rather than waited for.
      const skipTaken = dialect === 'postgres' ? sql` for update skip locked` : sql``
      const claimed = await orm
        .update(outbox)
        .set({ leaseUntil })
        .where(
          and(
            sql`${outbox.id} in (select ${outbox.id} from ${outbox} where ${due} order by ${outbox.nextAttemptAt} limit ${limit}${skipTaken})`,
            due,
          ),
        )
        .returning()
      if (claimed.length === 0) return []
      const ids = (field: 'webhookId' | 'integrationId') =>
        claimed.flatMap((delivery) => (delivery[field] ? [delivery[field]] : []))
      const webhookIds = ids('webhookId')
      const integrationIds = ids('integrationId')
      const [hooks, linked] = await Promise.all([
        webhookIds.length > 0 ? orm.select().from(webhooks).where(inArray(webhooks.id, webhookIds)) : [],
        integrationIds.length > 0 ? orm.select().from(integrations).where(inArray(integrations.id, integrationIds)) : [],
      ])
      const hookById = new Map(hooks.map((hook) => [hook.id, hook]))
      const integrationById = new Map(linked.map((integration) => [integration.id, integration]))
      return claimed.flatMap((delivery): ClaimedDelivery[] => {
        const webhook = delivery.webhookId ? hookById.get(delivery.webhookId) : undefined
        if (webhook) return [{ delivery, webhook }]
        const integration = delivery.integrationId ? integrationById.get(delivery.integrationId) : undefined
        return integration ? [{ delivery, integration }] : []
      })
    },
    /** What one attempt came to: the delivery's new state, written only while the lease is still this instance's. */
    async settle(
      id: string,
      lease: Date,
      outcome: Pick<Delivery, 'status' | 'attempts' | 'nextAttemptAt' | 'lastHttpStatus' | 'lastError' | 'lastAttemptAt'>,
    ): Promise<boolean> {
      const rows = await orm
        .update(outbox)
        .set({ ...outcome, leaseUntil: null })
        .where(and(eq(outbox.id, id), eq(outbox.leaseUntil, lease)))
        .returning({ id: outbox.id })
      return rows.length === 1
    },
    /** A destination that answered 410 Gone: it gets nothing more, and what waited for it is dead. */
    async disable(webhookId: string, at: Date): Promise<void> {
      await orm.update(webhooks).set({ disabledAt: at }).where(eq(webhooks.id, webhookId))
      await orm
        .update(outbox)
        .set({ status: 'dead', lastError: 'the destination answered 410 Gone: the webhook is disabled', leaseUntil: null })
        .where(and(eq(outbox.webhookId, webhookId), eq(outbox.status, 'pending')))
    },
    /** Deliveries waiting to be sent, across organisations (the outbox's size, for metrics). */
    async pendingCount(): Promise<number> {
      const [row] = await orm.select({ pending: sql<number | string>`count(*)` }).from(outbox).where(eq(outbox.status, 'pending'))
      // Postgres answers a bigint count as text.
      return Number(row?.pending ?? 0)
    },
    /**
     * Keeps each webhook's pending `request.completed` events to `cap`, dropping the oldest beyond it and
     * counting them on the webhook. Other events are never dropped. Answers how many were dropped.
     */
    async trim(cap: number, droppable: string): Promise<number> {
      const crowded = await orm
        .select({ webhookId: outbox.webhookId, pending: sql<number>`count(*)` })
        .from(outbox)
        .where(and(eq(outbox.status, 'pending'), eq(outbox.event, droppable), isNotNull(outbox.webhookId)))
        .groupBy(outbox.webhookId)
        .having(sql`count(*) > ${cap}`)
      let dropped = 0
      for (const { webhookId, pending } of crowded) {
        if (webhookId === null) continue
        const excess = Number(pending) - cap
        const oldest = orm
          .select({ id: outbox.id })
          .from(outbox)
          .where(
            and(
              eq(outbox.webhookId, webhookId),
              eq(outbox.status, 'pending'),
              eq(outbox.event, droppable),
              isNull(outbox.leaseUntil),
            ),
          )
          .orderBy(asc(outbox.createdAt))
          .limit(excess)
        const gone = await orm.delete(outbox).where(inArray(outbox.id, oldest)).returning({ id: outbox.id })
        await orm
          .update(webhooks)
          .set({ droppedEvents: sql`${webhooks.droppedEvents} + ${gone.length}` })
          .where(eq(webhooks.id, webhookId))
        dropped += gone.length
      }
      return dropped
    },
  }
}
