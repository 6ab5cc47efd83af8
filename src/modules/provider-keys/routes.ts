import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { CreateProviderKeyBody, ProviderKey, ProviderKeyParams, UpdateProviderKeyBody, VaultUpdateParams } from './model'
import type { ProviderKeysService } from './service'

/**
 * Provider keys (spec 4.6 `provider_keys.write`), under two names: `/v1/api-keys/provider-key*` and the
 * same store seen as a vault, `/v1/vault/*`. Secrets go in; only masked forms come out.
 */
export const providerKeyRoutes = (authz: Authz, keys: ProviderKeysService) => {
  const write = { catalogued: true as const }
  return new Elysia({ name: 'provider-key-routes' })
    .use(authz)
    .post('/v1/api-keys/provider-key', ({ principal, body }) => answerCreated(keys.create(principal, body)), {
      ...write,
      body: CreateProviderKeyBody,
      response: Created(ProviderKey),
      detail: { summary: 'Store a provider key (BYOK)' },
    })
    .post('/v1/vault/add', ({ principal, body }) => answerCreated(keys.create(principal, body)), {
      ...write,
      body: CreateProviderKeyBody,
      response: Created(ProviderKey),
      detail: { summary: 'Store a provider key in the vault' },
    })
    .get('/v1/api-keys/provider-keys', ({ principal }) => answer(keys.list(principal)), {
      ...write,
      response: Ok(t.Array(ProviderKey)),
      detail: { summary: 'Provider keys, masked' },
    })
    .get('/v1/vault/keys', ({ principal }) => answer(keys.list(principal)), {
      ...write,
      response: Ok(t.Array(ProviderKey)),
      detail: { summary: 'Vault keys, masked' },
    })
    .get(
      '/v1/api-keys/provider-key/:providerKeyId',
      ({ principal, params }) => answer(keys.get(principal, params.providerKeyId)),
      {
        ...write,
        params: ProviderKeyParams,
        response: Ok(ProviderKey),
        detail: { summary: 'One provider key, masked' },
      },
    )
    .get('/v1/vault/key/:providerKeyId', ({ principal, params }) => answer(keys.get(principal, params.providerKeyId)), {
      ...write,
      params: ProviderKeyParams,
      response: Ok(ProviderKey),
      detail: { summary: 'One vault key, masked' },
    })
    .patch(
      '/v1/api-keys/provider-key/:providerKeyId',
      ({ principal, params, body }) => answer(keys.update(principal, params.providerKeyId, body)),
      {
        ...write,
        params: ProviderKeyParams,
        body: UpdateProviderKeyBody,
        response: Ok(ProviderKey),
        detail: { summary: 'Rename, re-point or replace a provider key' },
      },
    )
    .patch('/v1/vault/update/:id', ({ principal, params, body }) => answer(keys.update(principal, params.id, body)), {
      ...write,
      params: VaultUpdateParams,
      body: UpdateProviderKeyBody,
      response: Ok(ProviderKey),
      detail: { summary: 'Update a vault key' },
    })
    .delete(
      '/v1/api-keys/provider-key/:providerKeyId',
      ({ principal, params }) => answer(keys.remove(principal, params.providerKeyId)),
      {
        ...write,
        params: ProviderKeyParams,
        response: Ok(Deleted),
        detail: { summary: 'Delete a provider key and the proxy keys bound to it' },
      },
    )
}
