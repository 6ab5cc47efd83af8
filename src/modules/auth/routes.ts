import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { parseManagementBody } from '../../http/body'
import { bearerToken, sourceIp } from '../../http/request-info'
import { AcceptInviteBody, LoginBody, LoginResult } from './model'
import type { AuthService } from './service'

/** Sessions for people: not in the spec's catalogue, so gated by authentication alone. */
export const authRoutes = (authz: Authz, auth: AuthService) =>
  new Elysia({ name: 'auth-routes' })
    .use(authz)
    .post(
      '/v1/auth/login',
      async ({ body, request, server }) => ({ data: await auth.login(body, sourceIp(server, request)), error: null }),
      {
        parse: parseManagementBody,
        body: LoginBody,
        response: { 200: LoginResult },
        detail: { summary: 'Log in with email and password; returns a session token (shown once)' },
      },
    )
    .post(
      '/v1/auth/accept-invite',
      async ({ body, request, server }) => ({
        data: await auth.acceptInvite(body.token, body.password, sourceIp(server, request)),
        error: null,
      }),
      {
        parse: parseManagementBody,
        body: AcceptInviteBody,
        detail: { summary: 'Set a password with a one-time invite token; returns a session (shown once)' },
      },
    )
    .post(
      '/v1/auth/logout',
      async ({ principal, request }) => {
        await auth.logout(principal, bearerToken(request))
        return { data: { loggedOut: true }, error: null }
      },
      { authenticated: true, detail: { summary: 'End the calling session' } },
    )
