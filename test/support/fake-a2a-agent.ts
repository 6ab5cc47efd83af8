import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AgentCard, Message, MessageSendParams, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk'
import {
  A2AError,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  type RequestContext,
  type ServerCallContext,
} from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'
import express from 'express'

/**
 * An A2A agent on loopback, built with the official SDK's server side (`@a2a-js/sdk`, A2A 0.3, JSON-RPC
 * over express): its card at the well-known names, `message/send` answered by an executor that echoes
 * the message back, and `message/stream` by one that runs a task (submitted, working, an artifact with
 * the echo, completed) as server-sent events. It keeps every call it was sent, with the Authorization
 * header it came with, so tests can see what gw forwarded; the key check, the hang and the broken card
 * are the fake's own, in front of the SDK.
 */

export interface FakeAgentCall {
  method: string
  authorization: string | null
  /** The W3C trace context gw passed on, when it traces. */
  traceparent: string | null
  body: Record<string, unknown>
}

export interface FakeA2aAgent {
  url: string
  calls: FakeAgentCall[]
  card: AgentCard
  close(): Promise<void>
}

export interface FakeAgentOptions {
  name?: string
  /** The key the agent expects as a bearer token; calls without it are 401. */
  key?: string
  /** What the card answers, in place of a valid one. */
  card?: unknown
  /** Only the name A2A used before 0.3 answers (agent.json). */
  legacyCardOnly?: boolean
  /** Calls are taken and never answered (until the agent is closed). */
  hang?: boolean
}

export const validCard = (name: string, url: string): AgentCard => ({
  protocolVersion: '0.3.0',
  name,
  description: `${name}, an agent for tests`,
  url,
  preferredTransport: 'JSONRPC',
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'says back what it was told', tags: ['test'] }],
  securitySchemes: { agentKey: { type: 'http', scheme: 'bearer' } },
  security: [{ agentKey: [] }],
})

const textOf = (message: Message): string => message.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('')

/** `message/send`: one message back, `echo: <text>`. */
class EchoExecutor implements AgentExecutor {
  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const answer: Message = {
      kind: 'message',
      messageId: crypto.randomUUID(),
      role: 'agent',
      contextId: context.contextId,
      parts: [{ kind: 'text', text: `echo: ${textOf(context.userMessage)}` }],
    }
    bus.publish(answer)
    bus.finished()
  }
  cancelTask = async (): Promise<void> => {}
}

/** `message/stream`: a task submitted, working, its artifact (the echo) and completed, a few ms apart. */
class TaskExecutor implements AgentExecutor {
  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = context
    const task: Task = { kind: 'task', id: taskId, contextId, status: { state: 'submitted' }, history: [userMessage] }
    const working: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId,
      contextId,
      status: { state: 'working' },
      final: false,
    }
    const artifact: TaskArtifactUpdateEvent = {
      kind: 'artifact-update',
      taskId,
      contextId,
      artifact: { artifactId: 'a-1', parts: [{ kind: 'text', text: `echo: ${textOf(userMessage)}` }] },
    }
    const completed: TaskStatusUpdateEvent = {
      kind: 'status-update',
      taskId,
      contextId,
      status: { state: 'completed' },
      final: true,
    }
    for (const event of [task, working, artifact, completed]) {
      bus.publish(event)
      await Bun.sleep(5)
    }
    bus.finished()
  }
  cancelTask = async (): Promise<void> => {}
}

/**
 * The SDK's request handler with the echo executor, its streams run by a second handler (the task
 * executor) over the same task store. A stream of the text `fail` breaks off after its first status
 * update with a JSON-RPC error, which the SDK's transport sends as an in-band `error` event.
 */
class FakeAgentHandler extends DefaultRequestHandler {
  private readonly streams: DefaultRequestHandler

  constructor(card: AgentCard) {
    const tasks = new InMemoryTaskStore()
    super(card, tasks, new EchoExecutor())
    this.streams = new DefaultRequestHandler(card, tasks, new TaskExecutor())
  }

  override async *sendMessageStream(params: MessageSendParams, context?: ServerCallContext) {
    const fail = textOf(params.message) === 'fail'
    for await (const event of this.streams.sendMessageStream(params, context)) {
      yield event
      if (fail && event.kind === 'status-update') throw A2AError.internalError('the agent gave up')
    }
  }
}

export async function startFakeA2aAgent(options: FakeAgentOptions = {}): Promise<FakeA2aAgent> {
  const calls: FakeAgentCall[] = []
  const name = options.name ?? 'Fake Agent'
  const { promise: closed, resolve: close } = Promise.withResolvers<void>()
  const app = express()
  const http = createServer(app)
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const card = validCard(name, url)
  const handler = new FakeAgentHandler(card)

  const cardProvider = async () => (options.card ?? card) as AgentCard
  if (!options.legacyCardOnly) app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: cardProvider }))
  app.use('/.well-known/agent.json', agentCardHandler({ agentCardProvider: cardProvider }))
  // What the agent was sent, the key it insists on, and the hang, before the SDK answers.
  app.post('/', express.json(), async (request, response, next) => {
    const authorization = request.headers.authorization ?? null
    const body = (request.body ?? {}) as Record<string, unknown>
    const traceparent = request.headers.traceparent
    calls.push({
      method: String(body.method),
      authorization,
      traceparent: typeof traceparent === 'string' ? traceparent : null,
      body,
    })
    if (options.key !== undefined && authorization !== `Bearer ${options.key}`) {
      response.status(401).json({ error: 'unauthorized' })
      return
    }
    if (options.hang) {
      await closed
      response.status(503).end('closed')
      return
    }
    next()
  })
  app.use('/', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))

  return {
    url,
    calls,
    card,
    async close() {
      close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
