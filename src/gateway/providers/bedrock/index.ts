import { ApiError } from '../../../errors'
import type { Usage } from '../../../money/usage'
import { withoutTrailingSlashes } from '../../../util/base-url'
import { usageOfConverse } from '../../translate/bedrock-converse'
import { asRecord, type ProviderAdapter, parseJson, type StreamUsage, type WireFamily } from '../provider'
import { EventStreamDecoder } from './event-stream'
import { invokeBody, invokeClaudeFamily, isBedrockClaude } from './invoke'
import { bedrockModelPath, signBedrockRequest } from './sign'

/**
 * AWS Bedrock's Converse API: one format for every model Bedrock serves, the model in the URL, each
 * request signed with the account's keys (SigV4), and streams framed as AWS event streams. A caller
 * that speaks Anthropic's Messages reaches Claude through InvokeModel instead, untranslated (invoke.ts).
 */

const usageFrom = (usage: Record<string, unknown> | undefined): Usage | undefined => usage && usageOfConverse(usage)

const stopReasons = (payload: unknown): string[] => {
  const reason = asRecord(payload)?.stopReason
  return typeof reason === 'string' ? [reason] : []
}

/** `messageStop` says why the model stopped; the `metadata` event after it carries the usage. */
function streamUsage(): StreamUsage {
  let usage: Usage | undefined
  let reasons: string[] = []
  return {
    push(event) {
      const payload = asRecord(parseJson(event.data))
      if (event.event === 'metadata') usage = usageFrom(asRecord(payload?.usage)) ?? usage
      else if (event.event === 'messageStop') reasons = stopReasons(payload)
    },
    result: () => usage,
    // Converse does not name the model that served: it is the one called.
    servedModel: () => undefined,
    finishReasons: () => reasons,
  }
}

export const bedrockFamily: WireFamily = {
  format: 'bedrock',
  // No caller speaks Converse: every call to it is translated.
  paths: [],
  chatPath: 'converse',
  requestUsageInStream: (body) => ({ body, callerAskedForUsage: true }),
  usageOf: (payload) => usageFrom(asRecord(asRecord(payload)?.usage)),
  streamUsage,
  servedModel: () => undefined,
  finishReasons: stopReasons,
  isStreamEnd: (event) => event.event === 'messageStop',
  isInjectedUsageEvent: () => false,
  eventParser: () => new EventStreamDecoder(),
}

/** What a call sends beside its signature, whole or streamed: constants, so the signer lays each out once. */
const SENT_WHOLE = { 'content-type': 'application/json', accept: 'application/json' } as const
const SENT_STREAMED = { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' } as const

export const bedrock: ProviderAdapter = {
  name: 'bedrock',
  family: (model, callerFormat) => (callerFormat === 'anthropic' && isBedrockClaude(model) ? invokeClaudeFamily : bedrockFamily),
  requiresKey: () => true,
  async upstream({ path, model, stream, credentials, body, callerHeaders }) {
    const { accessKeyId, apiKey: secretAccessKey, sessionToken, region } = credentials
    if (!accessKeyId || !secretAccessKey || !region)
      throw new ApiError('bad_request', 'this Bedrock connection lacks its access key id, secret access key or region')
    // A call passed through in Anthropic's format is one for InvokeModel (its family's only path).
    const invoke = invokeClaudeFamily.paths.includes(path)
    const url = `${withoutTrailingSlashes(credentials.baseUrl)}${bedrockModelPath(model, stream, invoke ? 'invoke' : 'converse')}`
    const sent = invoke ? invokeBody(body, callerHeaders) : (body ?? '')
    const headers = signBedrockRequest({
      url,
      method: 'POST',
      headers: stream ? SENT_STREAMED : SENT_WHOLE,
      body: sent,
      credentials: sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey },
      region,
    })
    return invoke ? { url, headers, body: sent } : { url, headers }
  },
}
