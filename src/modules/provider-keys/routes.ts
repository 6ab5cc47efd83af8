import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { CreateProviderKeyBody, ProviderKeyParams, UpdateProviderKeyBody, VaultUpdateParams } from './model'
import type { ProviderKeysService } from './service'

/**
 * Provider keys (spec 4.6 `provider_keys.write`), under two names: `/v1/api-keys/provider-key*` and the
 * same store seen as a vault, `/v1/vault/*`. Secrets go in; only masked forms come out.
 */
export const providerKeyRoutes = (authz: Authz, keys: ProviderKeysService) => {
  const write = { catalogued: true as const }
  return new Elysia({ name: 'provider-key-routes' })
    .use(authz)
    .post(
      '/v1/api-keys/provider-key',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await keys.create(principal, body), error: null }
      },
      { ...write, body: CreateProviderKeyBody, detail: { summary: 'Store a provider key (BYOK)' } },
    )
    .post(
      '/v1/vault/add',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await keys.create(principal, body), error: null }
      },
      { ...write, body: CreateProviderKeyBody, detail: { summary: 'Store a provider key in the vault' } },
    )
    .get('/v1/api-keys/provider-keys', async ({ principal }) => ({ data: await keys.list(principal), error: null }), {
      ...write,
      detail: { summary: 'Provider keys, masked' },
    })
    .get('/v1/vault/keys', async ({ principal }) => ({ data: await keys.list(principal), error: null }), {
      ...write,
      detail: { summary: 'Vault keys, masked' },
    })
    .get(
      '/v1/api-keys/provider-key/:providerKeyId',
      async ({ principal, params }) => ({ data: await keys.get(principal, params.providerKeyId), error: null }),
      {
        ...write,
        params: ProviderKeyParams,
        detail: { summary: 'One provider key, masked' },
      },
    )
    .get(
      '/v1/vault/key/:providerKeyId',
      async ({ principal, params }) => ({ data: await keys.get(principal, params.providerKeyId), error: null }),
      {
        ...write,
        params: ProviderKeyParams,
        detail: { summary: 'One vault key, masked' },
      },
    )
    .patch(
      '/v1/api-keys/provider-key/:providerKeyId',
      async ({ principal, params, body }) => ({
        data: await keys.update(principal, params.providerKeyId, body),
        error: null,
      }),
      {
        ...write,
        params: ProviderKeyParams,
        body: UpdateProviderKeyBody,
        detail: { summary: 'Rename, re-point or replace a provider key' },
      },
    )
    .patch(
      '/v1/vault/update/:id',
      async ({ principal, params, body }) => ({
        data: await keys.update(principal, params.id, body),
        error: null,
      }),
      { ...write, params: VaultUpdateParams, body: UpdateProviderKeyBody, detail: { summary: 'Update a vault key' } },
    )
    .delete(
      '/v1/api-keys/provider-key/:providerKeyId',
      async ({ principal, params }) => ({
        data: await keys.remove(principal, params.providerKeyId),
        error: null,
      }),
      { ...write, params: ProviderKeyParams, detail: { summary: 'Delete a provider key and the proxy keys bound to it' } },
    )
}
