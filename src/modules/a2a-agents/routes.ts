import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import { AgentKeyBody, AgentParams, AgentView, CreateAgentBody, ProbeView, UpdateAgentBody } from './model'
import type { A2aAgentsService } from './service'

/** The A2A agent registry (spec 4.6 `governance.write`; the list `org.read`). */
export const a2aAgentRoutes = (authz: Authz, agents: A2aAgentsService) =>
  new Elysia({ name: 'a2a-agent-routes' })
    .use(authz)
    .get('/v1/a2a/agents', ({ principal }) => answer(agents.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(AgentView)),
      detail: { summary: "The organization's registered A2A agents; keys only by their hint" },
    })
    .post('/v1/a2a/agents', ({ principal, body }) => answerCreated(agents.create(principal, body)), {
      catalogued: true,
      body: CreateAgentBody,
      response: Created(AgentView),
      detail: {
        summary: 'Register an A2A agent, relayed at /a2a/{id} (its URL must pass the egress policy; 409 when the name is taken)',
      },
    })
    .patch('/v1/a2a/agents/:id', ({ principal, params, body }) => answer(agents.update(principal, params.id, body)), {
      catalogued: true,
      params: AgentParams,
      body: UpdateAgentBody,
      response: Ok(AgentView),
      detail: { summary: 'Rename an A2A agent or move it (a new URL drops the card until the next probe)' },
    })
    .delete('/v1/a2a/agents/:id', ({ principal, params }) => answer(agents.remove(principal, params.id)), {
      catalogued: true,
      params: AgentParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete an A2A agent and its sealed key' },
    })
    .put('/v1/a2a/agents/:id/keys', ({ principal, params, body }) => answer(agents.setKey(principal, params.id, body.key)), {
      catalogued: true,
      params: AgentParams,
      body: AgentKeyBody,
      response: Ok(AgentView),
      detail: {
        summary: 'Set the key gw sends to the agent as a bearer token; stored sealed, answered only as hasKey and a hint',
      },
    })
    .post('/v1/a2a/agents/:id/probe', ({ principal, params }) => answer(agents.probe(principal, params.id)), {
      catalogued: true,
      params: AgentParams,
      response: Ok(ProbeView),
      detail: {
        summary:
          "Fetch and validate the agent's card now (/.well-known/agent-card.json, else agent.json; 10 s at most) and keep a valid one; a failure is ok: false",
      },
    })
