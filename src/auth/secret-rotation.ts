import type { Store } from '../store/store'
import { randomBytes } from '../util/random'
import { sealContexts, type Vault } from './vault'

const CREDENTIAL_KEY = 'credential_hmac'

/**
 * The key every credential hash is made with: random, made once per installation, kept sealed under
 * the server secret. (Hashing under the server secret itself would make rotating it revoke every key.)
 */
export async function loadCredentialKey(store: Store, vault: Vault, now: () => number = Date.now): Promise<string> {
  const context = sealContexts.serverKey(CREDENTIAL_KEY)
  let stored = await store.serverKeys.get(CREDENTIAL_KEY)
  if (!stored) {
    const made = randomBytes(32).toString('base64url')
    const sealed = await vault.seal(made, context)
    stored = await store.serverKeys.insertIfAbsent({ name: CREDENTIAL_KEY, sealed, createdAt: new Date(now()) })
    // Another process starting beside this one may have stored its key first: then that one is the key.
    if (stored.sealed === sealed) return made
  }
  try {
    return await vault.open(stored.sealed, context)
  } catch {
    throw new Error(
      "the server secret does not open this database's keys: GW_SECRET differs from the one the database was set up (or last rotated) with",
    )
  }
}

/**
 * Re-seals every stored secret (the server's own keys, provider keys, SSO client secrets, webhook
 * signing secrets, integration secrets, MCP server tokens, A2A agent keys) from the old
 * server secret's vault to the new one's, in one transaction: either all move or none does.
 */
export async function rotateServerSecret(
  store: Store,
  from: Vault,
  to: Vault,
): Promise<{
  serverKeys: number
  providerKeys: number
  ssoClientSecrets: number
  webhookSecrets: number
  integrationSecrets: number
  mcpServerTokens: number
  a2aAgentKeys: number
}> {
  const reseal = async (sealed: string, context: string) => to.seal(await from.open(sealed, context), context)
  return store.transaction(async (tx) => {
    const serverKeys = await tx.serverKeys.list()
    for (const key of serverKeys) {
      const context = sealContexts.serverKey(key.name)
      await tx.serverKeys.reseal(key.name, await reseal(key.sealed, context))
    }
    const providerKeys = await tx.providerKeySeals.listAll()
    for (const key of providerKeys) {
      const context = sealContexts.providerKey(key)
      await tx.providerKeySeals.reseal(key.orgId, key.id, await reseal(key.sealedSecret, context))
    }
    const ssoConfigs = await tx.ssoSeals.listAll()
    for (const config of ssoConfigs) {
      const context = sealContexts.ssoClientSecret(config.orgId)
      await tx.ssoSeals.reseal(config.orgId, await reseal(config.sealedClientSecret, context))
    }
    const webhooks = await tx.deliveries.allWebhooks()
    for (const webhook of webhooks) {
      const context = sealContexts.webhookSecret(webhook)
      await tx.deliveries.resealWebhook(webhook.id, await reseal(webhook.sealedSecret, context))
    }
    const integrations = await tx.integrationSeals.listAll()
    for (const integration of integrations) {
      const context = sealContexts.integrationSecrets(integration)
      await tx.integrationSeals.reseal(integration.id, await reseal(integration.sealedSecrets, context))
    }
    const mcpServers = await tx.mcpServerSeals.listAll()
    for (const server of mcpServers) {
      const context = sealContexts.mcpServerToken(server)
      await tx.mcpServerSeals.reseal(server.id, await reseal(server.sealedToken, context))
    }
    const agents = await tx.a2aAgentSeals.listAll()
    for (const agent of agents) {
      const context = sealContexts.a2aAgentKey(agent)
      await tx.a2aAgentSeals.reseal(agent.id, await reseal(agent.sealedKey, context))
    }
    return {
      serverKeys: serverKeys.length,
      providerKeys: providerKeys.length,
      ssoClientSecrets: ssoConfigs.length,
      webhookSecrets: webhooks.length,
      integrationSecrets: integrations.length,
      mcpServerTokens: mcpServers.length,
      a2aAgentKeys: agents.length,
    }
  })
}
