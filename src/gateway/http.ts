import type { Server } from 'bun'
import type { Authenticator } from '../auth/authenticator'
import { requireGatewayScope } from '../auth/scopes'
import { ApiError } from '../errors'
import { errorResponse, ownFault } from '../http/error-mapper'
import type { Logger } from '../log'
import type { Gateway } from './gateway'

/** Provider-style paths (spec 4.3), dispatched to the provider that serves the requested model. */
export const DISPATCH_PATHS = [
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/messages',
] as const
export type DispatchPath = (typeof DISPATCH_PATHS)[number]

/** Answers one provider-style call: the server hands it the request and itself (for the idle timeout). */
export type DispatchHandler = (request: Request, server?: Pick<Server<undefined>, 'timeout'>) => Promise<Response>

/**
 * The gateway's HTTP entry for the dispatch paths: authenticate, check the `gateway` scope, dispatch.
 * It is all a call needs, so `gw serve` routes these paths to it straight from Bun's router, without
 * the management API's lifecycle (a tenth of a call's cost, issue 8); the Elysia app routes to the
 * same handler, for its document and for in-process callers. A refusal is answered in the format of
 * the path's SDK, and so is our own fault (a store that cannot be reached while authenticating, say),
 * which is logged, never shown.
 */
export function dispatchHandler(
  authenticator: Authenticator,
  gateway: Gateway,
  path: DispatchPath,
  log: Logger,
): DispatchHandler {
  return async (request, server) => {
    try {
      const principal = await authenticator.authenticate(request.headers)
      requireGatewayScope(principal)
      return await gateway.dispatch({
        principal,
        path,
        request,
        // Read here, not parsed: even a malformed body is answered with the Gw-* headers.
        bodyText: await request.text(),
        keepAlive: () => server?.timeout(request as Request, 0),
      })
    } catch (error) {
      if (error instanceof ApiError) return errorResponse(path, error)
      return ownFault(log, path, error, { method: 'POST' })
    }
  }
}
