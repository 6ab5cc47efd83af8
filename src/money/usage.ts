/**
 * Token usage as gw records it, whatever the provider's own shape. `promptTokens` counts every input
 * token, cached or not; `cacheReadTokens` and `cacheWriteTokens` are the parts of it read from or
 * written to the provider's prompt cache. (OpenAI reports cached tokens inside `prompt_tokens`;
 * Anthropic reports `input_tokens` without them, so its adapter adds them in.)
 */
export interface Usage {
  promptTokens: number
  completionTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
}

export const totalTokens = (usage: Usage): number => usage.promptTokens + usage.completionTokens
