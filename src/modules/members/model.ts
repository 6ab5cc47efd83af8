import { EmailAddress } from '../../http/schema'
import { t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })

export const AddMemberBody = t.Object(
  {
    email: EmailAddress,
    role: t.String({ minLength: 1, maxLength: 64, description: 'admin, member or a custom role id' }),
  },
  { additionalProperties: false },
)
export type InviteInput = typeof AddMemberBody.static

export const UpdateMemberBody = t.Object(
  { userId: t.String({ minLength: 1, maxLength: 64 }), role: t.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)
export type UpdateMemberInput = typeof UpdateMemberBody.static

export const RemoveMemberBody = t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })

export const Member = t.Object({
  id: t.String({ description: 'the user id' }),
  userId: t.String(),
  role: t.String({ description: 'admin, member or a custom role id' }),
})

export const AddedMember = t.Object({
  ...Member.properties,
  inviteToken: t.Optional(t.String({ description: 'for someone without a password yet: a one-time invite token, shown once' })),
  inviteExpiresAt: t.Optional(t.String({ format: 'date-time' })),
})

export const RemovedMember = t.Object({ id: t.String(), userId: t.String(), removed: t.Literal(true) })

export const ListedMember = t.Object({
  userId: t.String(),
  email: t.String(),
  role: t.String({ description: 'owner, admin, member or a custom role id' }),
  joinedAt: t.String({ format: 'date-time' }),
})
