import type { Store } from '../store/store'
import { TtlCache } from '../util/ttl-cache'
import type { ValueOrPromise } from '../util/value-or-promise'

/** What the request log does with a finished call's bodies: keep them or not, and redact personal data first. */
export interface BodyPolicy {
  store: boolean
  redact: boolean
}

/** Where the request log finds an organisation's body policy. */
export interface BodyPolicySource {
  bodyPolicy(orgId: string): ValueOrPromise<BodyPolicy>
}

/** What the gateway reads of an organisation's settings on a call. */
export interface CallSettingsSource extends BodyPolicySource {
  /** Whether the organisation's streams end with the `gw` frame when a call does not ask for it. */
  streamMetaFrame(orgId: string): ValueOrPromise<boolean>
}

/** The gateway reads an organisation's call settings this fresh: a change holds within a second. */
const POLICY_CACHE_MS = 1_000

interface CallSettingsOfOrg {
  bodies: BodyPolicy
  streamMetaFrame: boolean
}

/** The organisations' call settings as calls read them, held for a second, forgotten when the module changes them. */
export class CallSettings implements CallSettingsSource {
  private readonly cache: TtlCache<string, CallSettingsOfOrg | Promise<CallSettingsOfOrg>>

  constructor(
    private readonly store: Store,
    now: () => number = Date.now,
  ) {
    this.cache = new TtlCache(100_000, POLICY_CACHE_MS, now)
  }

  /** What the request log does with a finished call's bodies. */
  bodyPolicy(orgId: string): ValueOrPromise<BodyPolicy> {
    const settings = this.of(orgId)
    return settings instanceof Promise ? settings.then((held) => held.bodies) : settings.bodies
  }

  streamMetaFrame(orgId: string): ValueOrPromise<boolean> {
    const settings = this.of(orgId)
    return settings instanceof Promise ? settings.then((held) => held.streamMetaFrame) : settings.streamMetaFrame
  }

  forget(orgId: string): void {
    this.cache.delete(orgId)
  }

  private of(orgId: string): ValueOrPromise<CallSettingsOfOrg> {
    return this.cache.held(orgId, async () => {
      const settings = await this.store.org(orgId).settings.get()
      return {
        bodies: { store: settings.bodyRetentionDays !== null, redact: settings.piiRedaction },
        streamMetaFrame: settings.streamMetaFrame,
      }
    })
  }
}
