import { describe, expect, test } from 'bun:test'
import { createApp } from '../src/app'
import { loadCredentialKey, rotateServerSecret } from '../src/auth/secret-rotation'
import { Vault } from '../src/auth/vault'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, TEST_SECRET } from './support/harness'

const NEW_SECRET = 'a-brand-new-server-secret-of-enough-length-0001'

for (const dialect of DIALECTS) {
  describe(`gw secret rotate (${dialect})`, () => {
    test('every stored secret stays readable under the new server secret, and only under it', async () => {
      const fake: FakeProvider = await startFakeProvider()
      const h = await createHarness({ dialect, providers: providersAt(fake) })
      try {
        const org = await h.org()
        await h.request('POST', '/v1/vault/add', {
          token: org.ownerSession,
          body: { provider: 'openai', name: 'own', secret: 'sk-own-secret-value-1234' },
        })

        expect(await rotateServerSecret(h.store, h.deps.vault, new Vault(NEW_SECRET))).toEqual({
          serverKeys: 1,
          providerKeys: 1,
          ssoClientSecrets: 0,
          webhookSecrets: 0,
          integrationSecrets: 0,
          mcpServerTokens: 0,
          a2aAgentKeys: 0,
        })

        // A gw restarted with the new secret: same credential key, so the same API keys and sessions work.
        const credentialKey = await loadCredentialKey(h.store, new Vault(NEW_SECRET))
        expect(credentialKey).toBe(h.credentialKey)
        await expect(loadCredentialKey(h.store, new Vault(TEST_SECRET))).rejects.toThrow('does not open')
        const restarted = createApp({ ...h.deps, vault: new Vault(NEW_SECRET), credentialKey })
        const call = await restarted.handle(
          new Request('http://localhost/v1/chat/completions', {
            method: 'POST',
            headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
          }),
        )
        expect(call.status).toBe(200)
        expect(fake.calls.at(-1)?.headers.authorization).toBe('Bearer sk-own-secret-value-1234')
      } finally {
        await h.close()
        await fake.close()
      }
    })

    test('the credential key is made once: starts that find none at the same time all get the one stored', async () => {
      const h = await createHarness({ dialect })
      try {
        await h.db.execute('DELETE FROM server_keys')
        const keys = await Promise.all([1, 2, 3].map(() => loadCredentialKey(h.store, new Vault(TEST_SECRET))))
        expect(new Set(keys).size).toBe(1)
        expect(keys[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(await loadCredentialKey(h.store, new Vault(TEST_SECRET))).toBe(keys[0] as string)
        expect(await h.db.query('SELECT name FROM server_keys')).toEqual([{ name: 'credential_hmac' }])
      } finally {
        await h.close()
      }
    })

    test('all or nothing: a secret that cannot be opened stops the rotation and nothing moves', async () => {
      const h = await createHarness({ dialect })
      try {
        const org = await h.org()
        await h.request('POST', '/v1/vault/add', {
          token: org.ownerSession,
          body: { provider: 'openai', name: 'ok', secret: 'sk-fine-0000000000' },
        })
        await h.request('POST', '/v1/vault/add', {
          token: org.ownerSession,
          body: { provider: 'anthropic', name: 'bad', secret: 'sk-fine-1111111111' },
        })
        const [bad] = (await h.store.org(org.orgId).providerKeys.list()).filter((k) => k.name === 'bad')
        await h.store.providerKeySeals.reseal(org.orgId, bad?.id as string, 'v1.garbage.garbage.garbage')
        const before = JSON.stringify(await h.db.query('SELECT * FROM server_keys'))
        await expect(rotateServerSecret(h.store, h.deps.vault, new Vault(NEW_SECRET))).rejects.toThrow()
        expect(JSON.stringify(await h.db.query('SELECT * FROM server_keys'))).toBe(before)
        expect(await loadCredentialKey(h.store, new Vault(TEST_SECRET))).toBe(h.credentialKey)
      } finally {
        await h.close()
      }
    })
  })
}
