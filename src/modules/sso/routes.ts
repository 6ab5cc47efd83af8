import { Elysia } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import {
  DomainVerification,
  EnforceBody,
  Enforcement,
  Entitlement,
  OrgParams,
  SsoBody,
  SsoRemoved,
  SsoSettings,
  SsoTestReport,
} from './model'
import type { SsoService } from './service'

/** SSO (spec 4.6): configuration under `org.settings.write`, entitlement under `org.read`, enforcement under `ownership`. */
export const ssoRoutes = (authz: Authz, sso: SsoService) =>
  new Elysia({ name: 'sso-routes' })
    .use(authz)
    .get('/v1/organization/:id/sso/entitlement', ({ principal }) => answer(sso.entitlement(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(Entitlement),
      detail: { summary: 'Whether SSO is available on this tier' },
    })
    .get('/v1/organization/:id/sso', ({ principal }) => answer(sso.get(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(SsoSettings),
      detail: { summary: 'The SSO configuration (client secret masked)' },
    })
    .put('/v1/organization/:id/sso', ({ principal, body }) => answer(sso.put(principal, body)), {
      catalogued: true,
      params: OrgParams,
      body: SsoBody,
      response: Ok(SsoSettings),
      detail: { summary: 'Configure OIDC single sign-on (Enterprise)' },
    })
    .delete('/v1/organization/:id/sso', ({ principal }) => answer(sso.remove(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(SsoRemoved),
      detail: { summary: 'Remove the SSO configuration' },
    })
    .post('/v1/organization/:id/sso/test', ({ principal }) => answer(sso.test(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(SsoTestReport),
      detail: { summary: "Fetch the issuer's discovery document and report what it says" },
    })
    .post('/v1/organization/:id/sso/verify-domain', ({ principal }) => answer(sso.verifyDomain(principal)), {
      catalogued: true,
      params: OrgParams,
      response: Ok(DomainVerification),
      detail: { summary: 'Issue, then check, a DNS TXT challenge for the SSO domain' },
    })
    .put('/v1/organization/:id/sso/enforce', ({ principal, body }) => answer(sso.enforce(principal, body.enforced)), {
      catalogued: true,
      params: OrgParams,
      body: EnforceBody,
      response: Ok(Enforcement),
      detail: { summary: "Make password login refuse this organization's members" },
    })
