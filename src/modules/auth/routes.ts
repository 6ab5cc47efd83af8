import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { parseManagementBody } from '../../http/body'
import { bearerToken, sourceIp } from '../../http/request-info'
import { Ok } from '../../http/schema'
import { AcceptInviteBody, LoggedOut, LoginBody, Session } from './model'
import type { AuthService } from './service'

/** Sessions for people: not in the spec's catalogue, so gated by authentication alone. */
export const authRoutes = (authz: Authz, auth: AuthService) =>
  new Elysia({ name: 'auth-routes' })
    .use(authz)
    .post('/v1/auth/login', ({ body, request, server }) => answer(auth.login(body, sourceIp(server, request))), {
      parse: parseManagementBody,
      body: LoginBody,
      response: Ok(Session),
      detail: { summary: 'Log in with email and password; returns a session token (shown once)' },
    })
    .post(
      '/v1/auth/accept-invite',
      ({ body, request, server }) => answer(auth.acceptInvite(body.token, body.password, sourceIp(server, request))),
      {
        parse: parseManagementBody,
        body: AcceptInviteBody,
        response: Ok(Session),
        detail: { summary: 'Set a password with a one-time invite token; returns a session (shown once)' },
      },
    )
    .post('/v1/auth/logout', ({ principal, request }) => answer(auth.logout(principal, bearerToken(request))), {
      authenticated: true,
      response: Ok(LoggedOut),
      detail: { summary: 'End the calling session' },
    })
