import type { ProviderName } from '../directory/providers'
/**
 * The shapes of the JSON columns both schemas declare, named once: the repositories and the code that
 * writes these columns read them from here.
 */

/** One provider call a request made: a retry, another key, or a fallback step. */
export interface CallAttempt {
  provider: string
  model: string
  /** The provider's status; absent when no answer came (a timeout, a refused connection). */
  httpStatus?: number
  /** Why the attempt failed; absent for the one that served. */
  error?: string
  latencyMs: number
}

/** One step of a fallback chain: a model, and optionally the provider and the key that serve it. */
export interface ChainStep {
  model: string
  provider?: ProviderName
  providerKeyId?: string
  /** How long this step may take to answer (its headers) before the next one is tried. */
  timeoutMs?: number
}

/** When a chain moves on to its next step; absent fields take the defaults. */
export interface ChainTriggers {
  statusCodes?: number[]
  timeout?: boolean
  networkError?: boolean
}

/** Retries of one step before the next is tried. */
export interface ChainRetry {
  attempts: number
  minDelayMs: number
  maxDelayMs: number
}

/**
 * An A2A agent's card as its agent published it, kept once it passed validation: the relay answers it
 * (with gw's own address) to A2A clients, and the registry shows its name and skills.
 */
export type AgentCardDocument = Record<string, unknown>

/**
 * What a provider key says besides its secret and its address: where and as whom its provider is
 * called (which of these a provider reads depends on it), and the model names callers use for the
 * provider's own (an Azure deployment, a Bedrock inference profile).
 */
export interface ConnectionSettings {
  /** Bedrock: the AWS region, and the access key id the secret belongs to. */
  region?: string
  accessKeyId?: string
  /** Azure: the API version (its deployments are in the path); the newest generally available one when absent. */
  apiVersion?: string
  /** Vertex: the project (the service account's own when absent) and the location (`global` when absent). */
  project?: string
  location?: string
  models?: Record<string, string>
}
