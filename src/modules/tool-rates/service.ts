import type { Principal } from '../../auth/principal'
import { badRequest, notFound } from '../../errors'
import { NANO_PER_USD, nanoToUsd } from '../../money/cost'
import { ANY, type ToolRateRow } from '../../store/repositories/tool-rates'
import type { Clock, Store } from '../../store/store'
import type { RateInput } from './model'

const MAX_DECIMALS = 9

/** Decimal places as JavaScript writes the number (the shortest form that reads back the same). */
function decimalPlaces(value: number): number {
  const [mantissa = '', exponent = '0'] = String(value).split('e')
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent))
}

const view = (row: ToolRateRow) => ({
  id: row.id,
  serverId: row.serverId,
  tool: row.tool,
  usdPerCall: nanoToUsd(row.usdNanoPerCall),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

/**
 * What MCP tool calls through gw cost an organisation. The MCP gateway reads the rates at each call, so
 * a change applies from the next call on every instance.
 */
export class ToolRatesService {
  constructor(
    private readonly store: Store,
    private readonly now: Clock = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).toolRates.list()).map(view)
  }

  async put(principal: Principal, input: RateInput) {
    // A price rounded silently would bill what nobody set.
    if (decimalPlaces(input.usdPerCall) > MAX_DECIMALS) throw badRequest('usdPerCall has more than 9 decimal places')
    const org = this.store.org(principal.orgId)
    if (input.serverId !== ANY && !(await org.mcpServers.get(input.serverId)))
      throw badRequest(`serverId ${JSON.stringify(input.serverId)} is none of this organization's MCP servers; name one, or *`)
    const at = new Date(this.now())
    const stored = await org.toolRates.upsert({
      id: crypto.randomUUID(),
      serverId: input.serverId,
      tool: input.tool,
      usdNanoPerCall: Math.round(input.usdPerCall * NANO_PER_USD),
      createdAt: at,
      updatedAt: at,
    })
    return view(stored)
  }

  async remove(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).toolRates.delete(id))) throw notFound('tool rate')
    return { id, deleted: true as const }
  }
}
