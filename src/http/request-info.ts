/** The bearer token of an authenticated request (the authz gate has already checked its shape). */
export const bearerToken = (request: Request): string => (request.headers.get('authorization') ?? '').trim().split(/\s+/)[1] ?? ''

/** The peer address as the server saw it; proxies in front of gw are not trusted for this. */
export const sourceIp = (server: { requestIP(r: Request): { address: string } | null } | null, request: Request): string | null =>
  server?.requestIP(request)?.address ?? null
