import { readServiceAccount, type ServiceAccount } from '../../../directory/service-account'
import { ApiError } from '../../../errors'
import { withoutTrailingSlashes } from '../../../util/base-url'
import { anthropicFamily } from '../anthropic'
import { geminiFamily, generateMethod } from '../gemini'
import { asRecord, type ProviderAdapter, parseJson, type WireFamily } from '../provider'
import { AccessTokens } from './token'

/**
 * Google's Vertex AI: Gemini in its own format, and Anthropic's Claude in Anthropic's, both in a
 * project and location of the operator's (or the organisation's) and authenticated with an access
 * token for a service account.
 */

/** The Messages version Claude on Vertex reads from the body, where Anthropic's API reads a header. */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

/**
 * Claude on Vertex takes Messages as Anthropic's API does, at its own model address; Vertex's own
 * refusals (a token, a project, a quota) come in Google's error shape, and reach the caller in Anthropic's.
 */
const claudeFamily: WireFamily = { ...anthropicFamily, paths: ['/v1/messages'], foreignErrors: true }

const isClaude = (model: string) => model.startsWith('claude')

/** A model id as a path segment: Claude's version suffix (`@20250929`) stays as Vertex writes it. */
const segment = (model: string) => encodeURIComponent(model).replaceAll('%40', '@')

const tokens = new AccessTokens()
/** Parsed key files, by their text: a call reads its account without parsing JSON each time. */
const accounts = new Map<string, ServiceAccount>()

function accountOf(text: string | undefined): ServiceAccount {
  const known = text === undefined ? undefined : accounts.get(text)
  if (known) return known
  const read = text === undefined ? 'it is missing' : readServiceAccount(text)
  if (typeof read === 'string')
    throw new ApiError('bad_request', `this organization's Vertex AI service account cannot be used: ${read}`)
  if (accounts.size >= 1_000) accounts.clear()
  accounts.set(text as string, read)
  return read
}

/** The body Claude on Vertex expects: no model (it is in the URL), the version in the body. */
function claudeBody(body: string | Uint8Array | undefined): string {
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  const { model: _model, ...rest } = asRecord(parseJson(text)) ?? {}
  return JSON.stringify({ ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION })
}

export const vertex: ProviderAdapter = {
  name: 'vertex',
  family: (model) => (isClaude(model) ? claudeFamily : geminiFamily),
  requiresKey: () => true,
  async upstream({ model, stream, credentials, body, fetch, callerHeaders }) {
    const account = accountOf(credentials.apiKey)
    const project = credentials.project ?? account.projectId
    if (!project)
      throw new ApiError('bad_request', 'this Vertex AI connection names no project, and its service account none either')
    const location = credentials.location ?? 'global'
    const headers = new Headers({
      'content-type': 'application/json',
      authorization: `Bearer ${await tokens.token(account, fetch)}`,
    })
    const unauthorized = () => tokens.forget(account)
    const models = `${withoutTrailingSlashes(credentials.baseUrl)}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers`
    if (!isClaude(model))
      return { url: `${models}/google/models/${segment(model)}:${generateMethod(stream)}`, headers, unauthorized }
    const method = stream ? 'streamRawPredict' : 'rawPredict'
    // Vertex takes Anthropic's beta features as Anthropic's API does, by header (Claude Code sends them).
    const betas = callerHeaders.get('anthropic-beta')
    if (betas) headers.set('anthropic-beta', betas)
    return { url: `${models}/anthropic/models/${segment(model)}:${method}`, headers, body: claudeBody(body), unauthorized }
  },
}
