import { MIN_PASSWORD_LENGTH } from '../../auth/passwords'
import { EmailAddress } from '../../http/schema'
import { t } from '../../util/typebox'

export const LoginBody = t.Object({
  email: EmailAddress,
  password: t.String({ minLength: 1, maxLength: 1024 }),
  orgId: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
})
export type LoginInput = typeof LoginBody.static

/** A new session: its token is shown this once. */
export const Session = t.Object({
  sessionToken: t.String(),
  expiresAt: t.String({ format: 'date-time' }),
  userId: t.String(),
  orgId: t.String(),
})

export const AcceptInviteBody = t.Object(
  {
    token: t.String({ minLength: 1, maxLength: 200 }),
    password: t.String({
      minLength: MIN_PASSWORD_LENGTH,
      maxLength: 1024,
      error: `password must have ${MIN_PASSWORD_LENGTH} to 1024 characters`,
    }),
  },
  { additionalProperties: false },
)

export const LoggedOut = t.Object({ loggedOut: t.Literal(true) })
