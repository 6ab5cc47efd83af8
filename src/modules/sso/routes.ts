import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import type { SsoService } from './service'

const OrgParams = t.Object({ id: t.String() })

/** SSO (spec 4.6): configuration under `org.settings.write`, entitlement under `org.read`, enforcement under `ownership`. */
export const ssoRoutes = (authz: Authz, sso: SsoService) =>
  new Elysia({ name: 'sso-routes' })
    .use(authz)
    .get('/v1/organization/:id/sso/entitlement', ({ principal }) => ({ data: sso.entitlement(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: 'Whether SSO is available on this tier' },
    })
    .get('/v1/organization/:id/sso', async ({ principal }) => ({ data: await sso.get(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: 'The SSO configuration (client secret masked)' },
    })
    .put('/v1/organization/:id/sso', async ({ principal, body }) => ({ data: await sso.put(principal, body), error: null }), {
      catalogued: true,
      params: OrgParams,
      body: t.Object(
        {
          issuer: t.String({ pattern: '^https?://', maxLength: 2000, error: 'issuer must be an http(s) URL' }),
          clientId: t.String({ minLength: 1, maxLength: 500 }),
          clientSecret: t.Optional(t.String({ minLength: 1, maxLength: 4096 })),
          domain: t.Optional(
            t.String({ pattern: '^[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$', maxLength: 253, error: 'domain must be a DNS name' }),
          ),
        },
        { additionalProperties: false },
      ),
      detail: { summary: 'Configure OIDC single sign-on (Enterprise)' },
    })
    .delete('/v1/organization/:id/sso', async ({ principal }) => ({ data: await sso.remove(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: 'Remove the SSO configuration' },
    })
    .post('/v1/organization/:id/sso/test', async ({ principal }) => ({ data: await sso.test(principal), error: null }), {
      catalogued: true,
      params: OrgParams,
      detail: { summary: "Fetch the issuer's discovery document and report what it says" },
    })
    .post(
      '/v1/organization/:id/sso/verify-domain',
      async ({ principal }) => ({ data: await sso.verifyDomain(principal), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        detail: { summary: 'Issue, then check, a DNS TXT challenge for the SSO domain' },
      },
    )
    .put(
      '/v1/organization/:id/sso/enforce',
      async ({ principal, body }) => ({ data: await sso.enforce(principal, body.enforced), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        body: t.Object({ enforced: t.Boolean() }, { additionalProperties: false }),
        detail: { summary: "Make password login refuse this organization's members" },
      },
    )
