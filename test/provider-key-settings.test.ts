/**
 * An organisation's keys for every provider: what each provider needs besides the secret (Bedrock's
 * access key id and region, Azure's endpoint, a Vertex service account and its project), checked when
 * the key is saved and shown when it is read; model aliases for any of them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { EgressPolicy } from '../src/egress/policy'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

interface KeyView {
  id: string
  provider: string
  secret: string
  region?: string
  accessKeyId?: string
  apiVersion?: string
  project?: string
  location?: string
  models?: Record<string, string>
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const serviceAccount = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'keys-project',
    private_key_id: 'k1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: 'gw-caller@keys-project.iam.gserviceaccount.com',
    token_uri: 'https://oauth2.googleapis.com/token',
    ...fields,
  })

const BEDROCK = {
  provider: 'bedrock',
  name: 'aws',
  secret: 'aws-secret-access-key-0123456789',
  region: 'eu-west-1',
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
}

for (const dialect of DIALECTS) {
  describe(`an organisation's keys for every provider (${dialect})`, () => {
    let h: Harness
    let org: Org
    beforeAll(async () => {
      h = await createHarness({ dialect, egress: new EgressPolicy({ enabled: true, resolve: async () => ['93.184.215.14'] }) })
      org = await h.org('growth')
    })
    afterAll(() => h.close())

    const add = (body: Record<string, unknown>, token = org.ownerSession) =>
      h.request('POST', '/v1/api-keys/provider-key', { token, body })
    const data = async (response: Response) => ((await response.json()) as { data: KeyView }).data
    const message = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message

    test('a Bedrock key is stored with its access key id and region, shown with them, its secret never', async () => {
      const created = await add({ ...BEDROCK, models: { 'claude-sonnet-4-5': 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' } })
      expect(created.status).toBe(201)
      const key = await data(created)
      expect(key).toMatchObject({
        provider: 'bedrock',
        region: 'eu-west-1',
        accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
        models: { 'claude-sonnet-4-5': 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' },
      })
      const read = await h.request('GET', `/v1/vault/key/${key.id}`, { token: org.ownerSession })
      const text = await read.text()
      expect(text).toContain('eu-west-1')
      expect(text).not.toContain(BEDROCK.secret)
      const rows = JSON.stringify(await h.db.query('SELECT * FROM provider_keys'))
      expect(rows).not.toContain(BEDROCK.secret)
    })

    test('what a provider needs is required, and what it does not take is refused; nothing is stored', async () => {
      const before = (await h.store.org(org.orgId).providerKeys.list()).length
      const refusals: Array<[Record<string, unknown>, string]> = [
        [{ ...BEDROCK, region: undefined }, 'region and accessKeyId'],
        [{ ...BEDROCK, accessKeyId: undefined }, 'region and accessKeyId'],
        [{ ...BEDROCK, apiVersion: '2024-10-21' }, 'apiVersion is not taken by a bedrock key'],
        [{ provider: 'azure', name: 'az', secret: 'k' }, 'an azure key needs baseUrl'],
        [{ provider: 'openai', name: 'o', secret: 'k', region: 'us-east-1' }, 'region is not taken by a openai key'],
        [{ provider: 'vertex', name: 'v', secret: 'not json' }, "a vertex key's secret must be a service account"],
        [{ provider: 'vertex', name: 'v', secret: serviceAccount({ type: 'authorized_user' }) }, 'service_account'],
        [{ provider: 'vertex', name: 'v', secret: serviceAccount({ project_id: undefined }) }, 'a vertex key needs project'],
        [{ ...BEDROCK, region: 'Mars' }, 'region must be an AWS region'],
        [{ ...BEDROCK, accessKeyId: 'short' }, 'accessKeyId must be'],
        [{ ...BEDROCK, models: { 'bad name!': 'x' } }, 'models'],
      ]
      for (const [body, expected] of refusals) {
        const refused = await add(body)
        expect({ body, status: refused.status }).toEqual({ body, status: 400 })
        expect(await message(refused)).toContain(expected)
      }
      expect((await h.store.org(org.orgId).providerKeys.list()).length).toBe(before)
    })

    test('an Azure key names its resource and maps the models callers use to its deployments', async () => {
      const created = await add({
        provider: 'azure',
        name: 'az',
        secret: 'azure-key-0123456789',
        baseUrl: 'https://acme.openai.azure.com',
        apiVersion: '2024-10-21',
        models: { 'gpt-4o': 'prod-4o' },
      })
      expect(created.status).toBe(201)
      expect(await data(created)).toMatchObject({ provider: 'azure', apiVersion: '2024-10-21', models: { 'gpt-4o': 'prod-4o' } })
    })

    test("a Vertex key is a service account: shown by its account's address, with its project and location", async () => {
      const created = await add({ provider: 'vertex', name: 'gcp', secret: serviceAccount(), location: 'europe-west4' })
      expect(created.status).toBe(201)
      const key = await data(created)
      expect(key).toMatchObject({
        provider: 'vertex',
        secret: 'gw-caller@keys-project.iam.gserviceaccount.com',
        location: 'europe-west4',
      })
      expect(JSON.stringify(key)).not.toContain('PRIVATE KEY')
      const named = await add({
        provider: 'vertex',
        name: 'other project',
        secret: serviceAccount({ project_id: undefined }),
        project: 'other-project',
      })
      expect(named.status).toBe(201)
    })

    test("a key's settings change alone, checked against its provider; the rest of it stays", async () => {
      const key = await data(await add({ ...BEDROCK, name: 'to change' }))
      const moved = await h.request('PATCH', `/v1/api-keys/provider-key/${key.id}`, {
        token: org.ownerSession,
        body: { region: 'us-west-2', models: { haiku: 'anthropic.claude-haiku-4-5-20251001-v1:0' } },
      })
      expect(moved.status).toBe(200)
      expect(await data(moved)).toMatchObject({
        region: 'us-west-2',
        accessKeyId: BEDROCK.accessKeyId,
        models: { haiku: expect.any(String) },
      })
      const foreign = await h.request('PATCH', `/v1/vault/update/${key.id}`, {
        token: org.ownerSession,
        body: { project: 'some-project' },
      })
      expect(foreign.status).toBe(400)
      expect((await h.store.org(org.orgId).providerKeys.get(key.id))?.settings).toMatchObject({ region: 'us-west-2' })
    })

    test("a Member may not add a key, and another organisation's key is not found", async () => {
      expect((await add(BEDROCK, org.apiKey)).status).toBe(403)
      const key = await data(await add({ ...BEDROCK, name: 'mine' }))
      const other = await h.org('growth')
      const stolen = await h.request('PATCH', `/v1/api-keys/provider-key/${key.id}`, {
        token: other.ownerSession,
        body: { region: 'us-east-2' },
      })
      expect(stolen.status).toBe(404)
      expect((await h.store.org(org.orgId).providerKeys.get(key.id))?.settings).toMatchObject({ region: 'eu-west-1' })
    })
  })
}
