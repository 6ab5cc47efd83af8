import { and, eq, isNull } from 'drizzle-orm'
import type { Database } from '../database'
import { orgRows } from '../scope'

export interface Invite {
  id: string
  orgId: string
  userId: string
  secretHash: string
  createdAt: Date
  expiresAt: Date
  usedAt: Date | null
}

/** Invitations an organisation sends. */
export const invitesRepository = ({ orm, tables: { invites } }: Database, orgId: string) => {
  const invite = orgRows(invites, orgId)
  return {
    async create(fields: Omit<Invite, 'orgId'>): Promise<void> {
      await orm.insert(invites).values(invite.row(fields))
    },
  }
}

/** Invitations by their own id, for the person accepting one (who holds its token, not yet a session). */
export const inviteTokensRepository = ({ orm, tables: { invites } }: Database) => ({
  async get(id: string): Promise<Invite | undefined> {
    const [row] = await orm.select().from(invites).where(eq(invites.id, id)).limit(1)
    return row
  },
  /** Marks it used unless it already was: true for exactly one caller, however many race. */
  async consume(id: string, at: Date): Promise<boolean> {
    const rows = await orm
      .update(invites)
      .set({ usedAt: at })
      .where(and(eq(invites.id, id), isNull(invites.usedAt)))
      .returning({ id: invites.id })
    return rows.length === 1
  },
})
