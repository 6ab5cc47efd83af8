import { t } from 'elysia'

export const OrgParams = t.Object({ id: t.String() })

export const AddMemberBody = t.Object(
  {
    email: t.String({ format: 'email', maxLength: 320, error: 'email must be an email address' }),
    role: t.String({ minLength: 1, maxLength: 64, description: 'admin, member or a custom role id' }),
  },
  { additionalProperties: false },
)

export const UpdateMemberBody = t.Object(
  { userId: t.String({ minLength: 1, maxLength: 64 }), role: t.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)

export const RemoveMemberBody = t.Object({ userId: t.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false })
