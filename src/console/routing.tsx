import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { ChainCall as ChainCallView, ChainInput, Chain as ChainView } from '../modules/fallback-chains/model'
import type { RequestsById } from '../modules/traffic/model'
import { api } from './api'
import { EditAndDelete, EditableList, type FormDone, type ItemActions, ItemForm } from './editable-list'
import { formatCount, formatMs, formatWhen } from './format'
import { type ProviderKey, useProviderKeys } from './provider-keys'
import { RequestDetail, type RequestView } from './request-detail'
import { ErrorNote, fieldValue, type PageProps, useAction } from './ui'

type Chain = typeof ChainView.static
type Step = Chain['steps'][number]
type Triggers = Chain['on']
type Retry = Chain['retry']
type ChainCall = typeof ChainCallView.static
type ChainProvider = NonNullable<ChainInput['steps'][number]['provider']>
/** Every provider a step may name; a record, so the compiler says when the API's list grows and this one did not. */
const STEP_PROVIDERS: Record<ChainProvider, true> = {
  openai: true,
  anthropic: true,
  gemini: true,
  vertex: true,
  bedrock: true,
  azure: true,
  mistral: true,
  groq: true,
  deepseek: true,
  xai: true,
  together: true,
  fireworks: true,
  openrouter: true,
  cerebras: true,
}
const PROVIDERS = Object.keys(STEP_PROVIDERS) as ChainProvider[]

/**
 * What POST and PUT take (PUT replaces the chain whole, so what is left out goes back to the defaults),
 * but with a status typed that is no number sent as typed: the API's refusal names it.
 */
type ChainBody = Omit<ChainInput, 'on'> & {
  on?: Omit<NonNullable<ChainInput['on']>, 'statusCodes'> & { statusCodes?: Array<number | string> }
}

const CHAINS_PATH = '/v1/gateway/fallback-chains'
const chainPath = (chain: Chain) => `${CHAINS_PATH}/${encodeURIComponent(chain.id)}`
const MAX_STEPS = 10
/**
 * The server's DEFAULT_FALLBACK_STATUSES, shown as the empty field's placeholder (the browser test holds
 * the two equal). A chain that names none (`defaultStatusCodes`) is edited with the field empty, so
 * saving it keeps following the defaults, and any other 5xx, rather than freezing today's list.
 */
const DEFAULT_STATUS_CODES: readonly number[] = [404, 408, 409, 410, 429, 500, 502, 503, 504, 529]
/** A new chain's retry delays: the gateway's own when a caller asks for retries without naming delays. */
const DEFAULT_DELAYS = { minDelayMs: 200, maxDelayMs: 5_000 } as const

/** `429, 500 503` as statuses; what is not a number goes as it is, for the API to name. */
const statusCodesOf = (text: string): Array<number | string> =>
  text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part))

function statusesText(on: Triggers): string {
  const codes = on.statusCodes.join(', ')
  return on.defaultStatusCodes ? `the defaults: ${codes}, and any other 5xx` : codes
}

function alsoText(on: Triggers): string {
  const also = [on.timeout && 'a timeout', on.networkError && 'no answer (a network error)'].filter(Boolean)
  return also.length === 0 ? 'nothing else' : also.join(' and ')
}

const retryText = (retry: Retry) =>
  !retry || retry.attempts === 0
    ? 'none'
    : `${retry.attempts} per step, ${formatMs(retry.minDelayMs)} to ${formatMs(retry.maxDelayMs)} apart`

const plural = (count: number, one: string, many: string) => `${formatCount(count)} ${count === 1 ? one : many}`

/**
 * The organisation's fallback chains: a call naming a chain's model is served by its steps in turn. Everyone
 * reads them; gateway_config.write changes them; traffic.read shows which step served the latest calls.
 */
export function Routing({ can }: PageProps) {
  const canWrite = can('gateway_config.write')
  const canSeeCalls = can('traffic.read')
  const keys = useProviderKeys(can('provider_keys.write'))
  const [selected, setSelected] = useState<string>()
  const [open, setOpen] = useState<RequestView>()
  const opening = useAction()

  const openRequest = (requestId: string) =>
    opening.run(async () => {
      const found = await api<typeof RequestsById.static>('POST', '/v1/request/query-ids', { requestIds: [requestId] })
      const request = found.requests[0]
      if (!request) throw new Error(`request ${requestId} is not in the log yet: try again in a moment`)
      setOpen(request)
    })

  if (open) return <RequestDetail request={open} can={can} back="Routing" onBack={() => setOpen(undefined)} />
  return (
    <section class="routing" aria-labelledby="routing">
      <h1 id="routing">Routing</h1>
      <p class="muted">
        Fallback chains: a call naming a chain's model is served by its steps in turn. When a step fails as the chain says (a
        status, a timeout, no answer), the next is tried; a request that is wrong (400, 401, 403, 422) never moves on.
      </p>
      <ErrorNote error={opening.error} />
      <EditableList<Chain>
        path={CHAINS_PATH}
        canWrite={canWrite}
        empty="No fallback chains: each call goes to the model it names."
        onRemoved={(chain) => {
          if (selected === chain.id) setSelected(undefined)
        }}
        show={(chain, actions) => (
          <ChainCard
            chain={chain}
            keys={keys}
            canWrite={canWrite}
            canSeeCalls={canSeeCalls}
            selected={selected === chain.id}
            onSelect={() => setSelected(selected === chain.id ? undefined : chain.id)}
            actions={actions}
            onOpenRequest={openRequest}
          />
        )}
        form={(chain, done) => <ChainForm chain={chain} keys={keys} {...done} />}
      />
    </section>
  )
}

const keyText = (id: string, keys: ProviderKey[] | undefined) => {
  const key = keys?.find((candidate) => candidate.id === id)
  return key ? `key ${key.name}` : `key ${id}`
}

function stepText(step: Step, keys: ProviderKey[] | undefined): string {
  return [
    step.provider && `by ${step.provider}`,
    step.providerKeyId && keyText(step.providerKeyId, keys),
    step.timeoutMs !== undefined && `${formatMs(step.timeoutMs)} to answer`,
  ]
    .filter(Boolean)
    .join(', ')
}

function ChainCard({
  chain,
  keys,
  canWrite,
  canSeeCalls,
  selected,
  onSelect,
  actions,
  onOpenRequest,
}: {
  chain: Chain
  keys: ProviderKey[] | undefined
  canWrite: boolean
  canSeeCalls: boolean
  selected: boolean
  onSelect(): void
  actions: ItemActions
  onOpenRequest(requestId: string): void
}) {
  const [calls, setCalls] = useState<ChainCall[]>()
  const { error, run } = useAction()
  const load = () => run(async () => setCalls(await api<ChainCall[]>('GET', `${chainPath(chain)}/calls`)))
  useEffect(() => {
    if (selected) load()
    else setCalls(undefined)
  }, [selected, chain.updatedAt])
  const served = (at: number) => calls?.filter((call) => call.servedBy === at).length ?? 0
  const unserved = calls?.filter((call) => call.servedBy === null).length ?? 0
  const facts: Array<[string, string]> = [
    ['Moves on after', statusesText(chain.on)],
    ['And after', alsoText(chain.on)],
    ['Retries', retryText(chain.retry)],
    ['Changed', formatWhen(chain.updatedAt)],
  ]
  return (
    <article class="card chain" aria-label={`Chain ${chain.name}`}>
      <h2>{chain.name}</h2>
      <p>
        Calls naming <code>{chain.match.model}</code> are served by:
      </p>
      <ol class="steps">
        {chain.steps.map((step, at) => (
          // A step is its place in the chain: the same model may be tried twice.
          <li key={at} data-step={at}>
            <code>{step.model}</code> <span class="muted">{stepText(step, keys)}</span>
            {calls && calls.length > 0 && (
              <span class="served" data-served>
                served {formatCount(served(at))} of the last {plural(calls.length, 'call', 'calls')}
              </span>
            )}
          </li>
        ))}
      </ol>
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <div class="row-actions">
        {canSeeCalls && (
          <button
            type="button"
            class="quiet"
            aria-expanded={selected}
            onClick={onSelect}
            aria-label={`${selected ? 'Hide' : 'Show'} the recent calls of ${chain.name}`}
          >
            {selected ? 'Hide recent calls' : 'Recent calls'}
          </button>
        )}
        {selected && (
          <button type="button" class="quiet" onClick={load} aria-label={`Refresh the recent calls of ${chain.name}`}>
            Refresh calls
          </button>
        )}
        {canWrite && <EditAndDelete name={chain.name} actions={actions} />}
      </div>
      <ErrorNote error={error} />
      {selected && !calls && !error && <p class="muted">Loading…</p>}
      {selected && calls && calls.length === 0 && <p class="muted">No calls have named this chain yet.</p>}
      {selected && calls && calls.length > 0 && (
        <>
          {unserved > 0 && (
            <p class="muted">
              {plural(unserved, 'call was', 'calls were')} served by no step: they failed on every step, or the step's model was
              changed since.
            </p>
          )}
          <CallsTable chain={chain} calls={calls} onOpenRequest={onOpenRequest} />
        </>
      )}
    </article>
  )
}

function CallsTable({
  chain,
  calls,
  onOpenRequest,
}: {
  chain: Chain
  calls: ChainCall[]
  onOpenRequest(requestId: string): void
}) {
  return (
    <table aria-label={`Recent calls of ${chain.name}`}>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Request</th>
          <th scope="col">Status</th>
          <th scope="col">Served by</th>
          <th scope="col">Attempts</th>
          <th scope="col">Cached</th>
          <th scope="col">Latency</th>
        </tr>
      </thead>
      <tbody>
        {calls.map((call) => (
          <tr key={call.requestId}>
            <td>{formatWhen(call.createdAt)}</td>
            <td>
              {/* The id's start tells calls apart; the whole id is on the request's page. */}
              <button
                type="button"
                class="link"
                title={call.requestId}
                aria-label={`Open request ${call.requestId}`}
                onClick={() => onOpenRequest(call.requestId)}
              >
                <code>{call.requestId.slice(0, 8)}…</code>
              </button>
            </td>
            <td class={call.status === 'error' ? 'error' : undefined}>
              {call.status} ({call.httpStatus})
            </td>
            <td data-served-by={call.servedBy ?? 'none'}>
              {call.servedBy === null ? (
                <span class="muted">no step</span>
              ) : (
                <>
                  step {call.servedBy + 1}, <code>{call.model}</code>
                </>
              )}
            </td>
            <td>{formatCount(call.attempts)}</td>
            <td>{call.cached ? 'yes' : 'no'}</td>
            <td>{formatMs(call.latencyMs)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** A step as the form holds it: text as typed, and a key that follows the step when it moves. */
interface StepDraft {
  key: number
  model: string
  provider: '' | ChainProvider
  providerKeyId: string
  timeoutMs: string
}

const isProvider = (value: string | undefined): value is ChainProvider => (PROVIDERS as readonly string[]).includes(value ?? '')

function stepBody(step: StepDraft): ChainBody['steps'][number] {
  const timeout = step.timeoutMs.trim()
  return {
    model: step.model.trim(),
    ...(step.provider ? { provider: step.provider } : {}),
    ...(step.providerKeyId ? { providerKeyId: step.providerKeyId } : {}),
    ...(timeout ? { timeoutMs: Number(timeout) } : {}),
  }
}

/** The chain the form describes; an empty field leaves its part out, so the server's default applies. */
function chainBody(data: FormData, steps: StepDraft[]): ChainBody {
  const text = (name: string) => String(data.get(name) ?? '').trim()
  const codes = statusCodesOf(text('statusCodes'))
  // Checked is the default: only a change from it is sent, so the chain follows the defaults where it can.
  const on = {
    ...(codes.length > 0 ? { statusCodes: codes } : {}),
    ...(data.get('timeout') ? {} : { timeout: false }),
    ...(data.get('networkError') ? {} : { networkError: false }),
  }
  const attempts = text('attempts')
  return {
    name: text('name'),
    match: { model: text('matchModel') },
    steps: steps.map(stepBody),
    ...(Object.keys(on).length > 0 ? { on } : {}),
    ...(attempts
      ? { retry: { attempts: Number(attempts), minDelayMs: Number(text('minDelayMs')), maxDelayMs: Number(text('maxDelayMs')) } }
      : {}),
  }
}

type Direction = 'up' | 'down'

/** A new chain, or a chain changed whole: name, alias, steps (added, removed, reordered), when to move on, retries. */
function ChainForm({
  chain,
  keys,
  ...done
}: {
  chain: Chain | undefined
  keys: ProviderKey[] | undefined
} & FormDone) {
  const made = useRef(0)
  const draft = (step?: Step): StepDraft => {
    made.current += 1
    return {
      key: made.current,
      model: step?.model ?? '',
      provider: isProvider(step?.provider) ? step.provider : '',
      providerKeyId: step?.providerKeyId ?? '',
      timeoutMs: step?.timeoutMs === undefined ? '' : String(step.timeoutMs),
    }
  }
  const [steps, setSteps] = useState<StepDraft[]>(() => (chain ? chain.steps.map(draft) : [draft()]))
  // A moved or removed step takes the keyboard's focus with it, so moving a step again is one more key press;
  // a step added has it on its model. Before the paint, so that keys pressed at once land there.
  const controls = useRef(new Map<string, HTMLElement>())
  const [focus, setFocus] = useState<string>()
  const [moved, setMoved] = useState<string>()
  useLayoutEffect(() => {
    if (!focus) return
    controls.current.get(focus)?.focus()
    setFocus(undefined)
  }, [focus])
  const control = (name: string) => (element: HTMLElement | null) => {
    if (element) controls.current.set(name, element)
    else controls.current.delete(name)
  }

  const update = (key: number, change: Partial<StepDraft>) =>
    setSteps((current) => current.map((step) => (step.key === key ? { ...step, ...change } : step)))
  const move = (at: number, direction: Direction) => {
    const to = direction === 'up' ? at - 1 : at + 1
    const step = steps[at]
    const other = steps[to]
    if (!step || !other) return
    const next = [...steps]
    next[to] = step
    next[at] = other
    setSteps(next)
    // At the end it moved toward, its button for that way is disabled: the other way keeps the focus.
    const atEnd = to === 0 || to === steps.length - 1
    setFocus(`${step.key}:${atEnd ? (direction === 'up' ? 'down' : 'up') : direction}`)
    setMoved(`${step.model.trim() || 'The step'} is now step ${to + 1} of ${steps.length}.`)
  }
  const remove = (at: number) => {
    const next = steps.filter((_, index) => index !== at)
    setSteps(next)
    const after = next[Math.min(at, next.length - 1)]
    if (after) setFocus(`${after.key}:model`)
    setMoved(undefined)
  }
  const add = () => {
    const step = draft()
    setSteps([...steps, step])
    setFocus(`${step.key}:model`)
  }
  const send = (form: HTMLFormElement) => {
    const body = chainBody(new FormData(form), steps)
    return chain ? api('PUT', chainPath(chain), body) : api('POST', CHAINS_PATH, body)
  }

  const codes = chain && !chain.on.defaultStatusCodes ? chain.on.statusCodes.join(', ') : ''
  return (
    <ItemForm
      name={chain ? `Edit ${chain.name}` : 'New fallback chain'}
      kind="chain"
      editing={chain !== undefined}
      submit={chain ? 'Save chain' : 'Add chain'}
      send={send}
      {...done}
    >
      <label>
        Name
        <input name="name" required maxLength={200} defaultValue={chain?.name ?? ''} />
      </label>
      <label>
        Model the calls name (the chain's alias)
        <input name="matchModel" required maxLength={200} placeholder="smart" defaultValue={chain?.match.model ?? ''} />
      </label>
      <fieldset class="steps">
        <legend>Steps, tried in this order</legend>
        {steps.map((step, at) => (
          <StepFields
            key={step.key}
            step={step}
            at={at}
            count={steps.length}
            keys={keys}
            control={control}
            onChange={(change) => update(step.key, change)}
            onMove={(direction) => move(at, direction)}
            onRemove={() => remove(at)}
          />
        ))}
        <div class="actions">
          <button type="button" class="quiet" onClick={add} disabled={steps.length >= MAX_STEPS}>
            Add a step
          </button>
          <span class="muted" role="status">
            {moved ?? (steps.length >= MAX_STEPS ? `A chain has at most ${MAX_STEPS} steps.` : '')}
          </span>
        </div>
      </fieldset>
      <label>
        Move on after these statuses (comma-separated; empty: the defaults, and any other 5xx)
        <input name="statusCodes" defaultValue={codes} placeholder={DEFAULT_STATUS_CODES.join(', ')} />
      </label>
      <fieldset>
        <legend>And after</legend>
        <label class="check">
          <input type="checkbox" name="timeout" defaultChecked={chain?.on.timeout ?? true} /> a step's timeout
        </label>
        <label class="check">
          <input type="checkbox" name="networkError" defaultChecked={chain?.on.networkError ?? true} /> no answer (a network
          error)
        </label>
      </fieldset>
      <fieldset class="retry">
        <legend>Retries of each step before the next</legend>
        <label>
          Retries (0 to 5; empty: none)
          <input
            name="attempts"
            type="number"
            min={0}
            max={5}
            step={1}
            defaultValue={chain?.retry ? String(chain.retry.attempts) : ''}
          />
        </label>
        <label>
          Least delay (ms)
          <input
            name="minDelayMs"
            type="number"
            min={0}
            max={10_000}
            step={1}
            defaultValue={String(chain?.retry?.minDelayMs ?? DEFAULT_DELAYS.minDelayMs)}
          />
        </label>
        <label>
          Most delay (ms)
          <input
            name="maxDelayMs"
            type="number"
            min={0}
            max={30_000}
            step={1}
            defaultValue={String(chain?.retry?.maxDelayMs ?? DEFAULT_DELAYS.maxDelayMs)}
          />
        </label>
      </fieldset>
    </ItemForm>
  )
}

function StepFields({
  step,
  at,
  count,
  keys,
  control,
  onChange,
  onMove,
  onRemove,
}: {
  step: StepDraft
  at: number
  count: number
  keys: ProviderKey[] | undefined
  control(name: string): (element: HTMLElement | null) => void
  onChange(change: Partial<StepDraft>): void
  onMove(direction: Direction): void
  onRemove(): void
}) {
  const place = `step ${at + 1}`
  // A step naming its provider takes only that provider's keys; otherwise the server says which one fits.
  const choices = keys?.filter((key) => !step.provider || key.provider === step.provider) ?? []
  const unlisted = step.providerKeyId !== '' && !choices.some((key) => key.id === step.providerKeyId)
  return (
    <fieldset class="step" data-step-key={step.key}>
      <legend>Step {at + 1}</legend>
      <label class="model">
        Model
        <input
          ref={control(`${step.key}:model`)}
          required
          maxLength={200}
          placeholder="gpt-4o"
          value={step.model}
          onInput={(event) => onChange({ model: fieldValue(event) })}
        />
      </label>
      <label class="choice">
        Provider
        <select value={step.provider} onChange={(event) => onChange({ provider: fieldValue(event) as StepDraft['provider'] })}>
          <option value="">as gw routes the model</option>
          {PROVIDERS.map((provider) => (
            <option key={provider} value={provider}>
              {provider}
            </option>
          ))}
        </select>
      </label>
      <label class="choice">
        Provider key
        <select value={step.providerKeyId} onChange={(event) => onChange({ providerKeyId: fieldValue(event) })}>
          <option value="">the usual choice</option>
          {unlisted && <option value={step.providerKeyId}>{keyText(step.providerKeyId, keys)}</option>}
          {choices.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.provider})
            </option>
          ))}
        </select>
      </label>
      <label>
        Timeout (ms, optional)
        <input
          type="number"
          min={100}
          max={600_000}
          step={1}
          value={step.timeoutMs}
          onInput={(event) => onChange({ timeoutMs: fieldValue(event) })}
        />
      </label>
      <div class="row-actions">
        <button
          ref={control(`${step.key}:up`)}
          type="button"
          class="quiet"
          disabled={at === 0}
          onClick={() => onMove('up')}
          aria-label={`Move ${place} up`}
        >
          ↑ Up
        </button>
        <button
          ref={control(`${step.key}:down`)}
          type="button"
          class="quiet"
          disabled={at === count - 1}
          onClick={() => onMove('down')}
          aria-label={`Move ${place} down`}
        >
          ↓ Down
        </button>
        <button type="button" class="danger" disabled={count === 1} onClick={onRemove} aria-label={`Remove ${place}`}>
          Remove
        </button>
      </div>
    </fieldset>
  )
}
