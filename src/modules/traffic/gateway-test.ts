import type { Principal } from '../../auth/principal'
import { requireGatewayScope } from '../../auth/scopes'
import { providerPrefix, providersOf } from '../../directory/catalogue'
import type { ProviderName } from '../../directory/providers'
import { badRequest, forbidden, notFound } from '../../errors'
import type { DispatchPath } from '../../gateway/dispatch-routes'
import type { Store } from '../../store/store'
import type { GatewayTestInput } from './model'

/** What the test needs of the gateway; the composition root wires it, so this module knows none of its files. */
export interface GatewayTestDeps {
  /** Sends one call down the gateway's own path, as the principal. */
  call(principal: Principal, path: DispatchPath, request: Request, bodyText: string): Promise<Response>
  /** The cost in USD the gateway reported for a call it served, while its metadata is kept. */
  costOf(requestId: string): Promise<number | undefined>
  /** Where the organisation's provider keys are, for a test on one of them. */
  store: Pick<Store, 'org'>
  now?: () => number
}

/** The record of a test call carries this property, so it can be told apart from real traffic (and filtered out). */
export const TEST_PROPERTY = 'gw-test'

/**
 * The test's reply is capped: enough for a reasoning model to think before a short answer (16 tokens
 * left OpenAI's o-series and Gemini 2.5 with nothing to say), and a few cents at most on the dearest model.
 */
export const TEST_OUTPUT_TOKENS = 256

/**
 * OpenAI's reasoning models refuse `max_tokens`, and OpenAI and Azure take `max_completion_tokens` for
 * every model; other OpenAI-compatible vendors read `max_tokens` (Mistral refuses a field it does not
 * know), and the providers gw translates to take either.
 */
const TAKES_COMPLETION_TOKENS: ReadonlySet<ProviderName> = new Set(['openai', 'azure'])

/** The provider a model names (`groq/...`), or the one its bare name is served by first; none when unknown. */
const providerNamed = (model: string): ProviderName | undefined => providerPrefix(model) ?? providersOf(model)[0]

const outputCap = (model: string): Record<string, number> => {
  const provider = providerNamed(model)
  const field = provider && TAKES_COMPLETION_TOKENS.has(provider) ? 'max_completion_tokens' : 'max_tokens'
  return { [field]: TEST_OUTPUT_TOKENS }
}

/**
 * `POST /v1/test/gateway-request`: one small chat call through the organisation's own gateway path
 * (its keys, limits, credits and log, exactly as a real call), reported as an outcome. It spends what
 * such a call costs, and it is logged like any other, with the property `gw-test: true`.
 */
export class GatewayTest {
  private readonly now: () => number

  constructor(private readonly deps: GatewayTestDeps) {
    this.now = deps.now ?? Date.now
  }

  async run(principal: Principal, input: GatewayTestInput) {
    // traffic.read lets a key ask for the test; the call itself needs what a gateway call needs.
    requireGatewayScope(principal)
    const { caller, model } =
      input.providerKeyId === undefined
        ? { caller: principal, model: input.model }
        : await this.onKey(principal, input.providerKeyId, input.model)
    const path: DispatchPath = '/v1/chat/completions'
    const bodyText = JSON.stringify({
      model,
      messages: [{ role: 'user', content: input.prompt ?? 'ping' }],
      ...outputCap(model),
    })
    const request = new Request(`http://gw.internal${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [`gw-property-${TEST_PROPERTY}`]: 'true' },
      body: bodyText,
    })
    const started = this.now()
    const response = await this.deps.call(caller, path, request, bodyText)
    const latencyMs = this.now() - started
    const text = await response.text()
    const requestId = response.headers.get('Gw-Id') ?? ''
    return {
      ok: response.ok,
      requestId,
      httpStatus: response.status,
      provider: response.headers.get('Gw-Provider') ?? 'unknown',
      model: response.headers.get('Gw-Model') ?? model,
      gatewayMode: response.headers.get('Gw-Gateway-Mode') ?? 'passthrough',
      latencyMs,
      cost: (await this.deps.costOf(requestId)) ?? null,
      answer: response.ok ? answerText(text) : null,
      error: response.ok ? null : errorMessage(text, response.status),
    }
  }

  /**
   * A test on one of the organisation's own keys is made as a proxy key bound to it: the call runs on
   * that key or fails, never on another key or the operator's. A model named without a provider is the
   * key's provider's; one naming another provider could not run on the key, and is refused before any call.
   */
  private async onKey(principal: Principal, keyId: string, requested: string) {
    if (principal.boundProviderKeyId !== undefined && principal.boundProviderKeyId !== keyId)
      throw forbidden('this proxy key makes calls on its own provider key only')
    const key = await this.deps.store.org(principal.orgId).providerKeys.get(keyId)
    if (!key) throw notFound('provider key')
    const named = providerPrefix(requested)
    if (named && named !== key.provider)
      throw badRequest(`provider key ${key.id} is a ${key.provider} key; model ${requested} is served by ${named}`)
    const model = named ? requested : `${key.provider}/${requested}`
    return { caller: { ...principal, boundProviderKeyId: key.id }, model }
  }
}

/** The reply's text, from the chat completion the test's path answers with (whatever the provider's own format). */
function answerText(text: string): string | null {
  try {
    const content = (JSON.parse(text) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content
    return typeof content === 'string' ? content : null
  } catch {
    return null
  }
}

/** The provider's or the gateway's error message, in either SDK's error shape. */
function errorMessage(text: string, status: number): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message
    if (typeof message === 'string') return message
  } catch {
    // not JSON: say what status came back
  }
  return `the gateway answered ${status}`
}
