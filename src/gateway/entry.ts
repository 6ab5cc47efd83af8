import type { Server } from 'bun'
import type { Authenticator } from '../auth/authenticator'
import type { Principal } from '../auth/principal'
import { requireGatewayScope } from '../auth/scopes'
import { answerFailure } from '../error-answers'
import { payloadTooLarge } from '../errors'
import type { Logger } from '../log'
import { announcedLength, type BodyBudget, readBody, readBodyText } from '../util/read-body'
import type { ValueOrPromise } from '../util/value-or-promise'
import { DISPATCH_ROUTES, type DispatchPath, type ProviderApi } from './dispatch-routes'
import type { Gateway } from './gateway'

/** Answers one provider-style call: the server hands it the request and itself (for the idle timeout). */
export type DispatchHandler = (request: Request, server?: Pick<Server<undefined>, 'timeout'>) => Promise<Response>

/** How large a call's body may be, and how many body bytes all calls together may hold (GW_MAX_BODY_BYTES). */
export interface BodyLimits {
  maxBodyBytes: number
  budget: BodyBudget
}

const NO_BODY: Uint8Array = new Uint8Array()

/**
 * Who is calling: a body announced too large is refused first, then the caller must be known and hold
 * the `gateway` scope. A known key is answered at once, without a promise.
 */
function callerOf(
  request: Request,
  authenticator: Authenticator,
  limits: BodyLimits,
  announced = announcedLength(request),
): ValueOrPromise<Principal> {
  if (announced !== undefined && announced > limits.maxBodyBytes) throw payloadTooLarge(limits.maxBodyBytes)
  const authenticating = authenticator.principalOf(request.headers)
  return authenticating instanceof Promise ? authenticating.then(withGatewayScope) : withGatewayScope(authenticating)
}

const withGatewayScope = (principal: Principal): Principal => {
  requireGatewayScope(principal)
  return principal
}

/**
 * What every call with a body passes before it is handled: its caller (above), then the body read
 * within its limit. A body sent in chunks may be as large as the limit: it holds that much of the
 * budget until it is read; `release` gives it back once the call is answered.
 */
async function admit<Body>(
  request: Request,
  authenticator: Authenticator,
  limits: BodyLimits,
  read: (request: Request, limit: number) => Promise<Body>,
): Promise<{ principal: Principal; body: Body; release: () => void }> {
  const announced = announcedLength(request)
  const calling = callerOf(request, authenticator, limits, announced)
  const principal = calling instanceof Promise ? await calling : calling
  const holding = limits.budget.hold(announced ?? limits.maxBodyBytes)
  const release = holding instanceof Promise ? await holding : holding
  try {
    return { principal, body: await read(request, limits.maxBodyBytes), release }
  } catch (error) {
    release()
    throw error
  }
}

/**
 * The gateway's HTTP entry for the dispatch paths: authenticate, check the `gateway` scope, read the
 * body within its limits, dispatch. It is all a call needs, so `gw serve` routes these paths to it
 * straight from Bun's router, without the management API's lifecycle (a tenth of a call's cost); the
 * Elysia app routes to the same handler, for its document and for in-process callers. A refusal is
 * answered in the format of the path's SDK, and so is our own fault (a store that cannot be reached
 * while authenticating, say), which is logged, never shown.
 */
export function dispatchHandler(
  authenticator: Authenticator,
  gateway: Gateway,
  path: DispatchPath,
  log: Logger,
  limits: BodyLimits,
): DispatchHandler {
  const upload = DISPATCH_ROUTES[path].body === 'multipart'
  return async (request, server) => {
    let release: (() => void) | undefined
    try {
      const keepAlive = () => server?.timeout(request as Request, 0)
      // An upload stays bytes (the request log keeps a note of it); a JSON body is read as text, not
      // parsed: even a malformed one is answered with the Gw-* headers.
      if (upload) {
        const admitted = await admit(request, authenticator, limits, readBody)
        release = admitted.release
        const { principal, body } = admitted
        const bodyText = `[multipart/form-data, ${body.byteLength} bytes]`
        return await gateway.dispatch({ principal, path, request, bodyText, bodyBytes: body, keepAlive })
      }
      const admitted = await admit(request, authenticator, limits, readBodyText)
      release = admitted.release
      return await gateway.dispatch({ principal: admitted.principal, path, request, bodyText: admitted.body, keepAlive })
    } catch (error) {
      return answerFailure(log, DISPATCH_ROUTES[path].format, error, { method: 'POST', path })
    } finally {
      release?.()
    }
  }
}

/**
 * The HTTP entry of a provider API (files, batches): as for a dispatch path, authenticate, check the
 * `gateway` scope, read the body within its limits (as bytes: uploads are never decoded), then pass
 * the call through. Refusals are in the provider's error format.
 */
export function providerApiHandler(
  authenticator: Authenticator,
  gateway: Gateway,
  api: ProviderApi,
  log: Logger,
  limits: BodyLimits,
): DispatchHandler {
  // The caller speaks the provider's own API, and reads its refusals in that format.
  const format = api.provider
  return async (request, server) => {
    let release: (() => void) | undefined
    try {
      // A GET or DELETE has no body to read, and holds none of the budget.
      const admitted =
        api.method === 'POST'
          ? await admit(request, authenticator, limits, readBody)
          : { principal: await callerOf(request, authenticator, limits), body: NO_BODY, release: undefined }
      release = admitted.release
      const { principal, body } = admitted
      server?.timeout(request as Request, 0)
      const kind = request.headers.get('content-type')?.split(';')[0]?.trim() || 'no content type'
      return await gateway.passThrough({
        principal,
        api,
        request,
        ...(body.byteLength > 0 ? { body } : {}),
        bodyText: body.byteLength > 0 ? `[${kind}, ${body.byteLength} bytes]` : '',
      })
    } catch (error) {
      return answerFailure(log, format, error, { method: api.method, path: api.path })
    } finally {
      release?.()
    }
  }
}
