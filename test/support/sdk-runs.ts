import { isStepCount, jsonSchema, type LanguageModel, type LanguageModelUsage, streamText, tool } from 'ai'
import type OpenAI from 'openai'

/**
 * The Vercel AI SDK's streamText as an application runs it: with the `get_weather` tool (which
 * answers 21 °C for any city) and two steps when `tools` is set, read to its end. It never throws:
 * what went wrong is in `errors`, as the SDK reported it.
 */
export async function streamTextThroughGw(model: LanguageModel, prompt: string, tools = false) {
  const executed: unknown[] = []
  const errors: unknown[] = []
  const weather = tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema<{ city: string }>({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    }),
    execute: async (input) => {
      executed.push(input)
      return { city: input.city, celsius: 21 }
    },
  })
  const result = streamText({
    model,
    prompt,
    maxRetries: 0,
    // Set, so @ai-sdk/anthropic does not warn that it guesses a limit for a model it does not know (gpt-4o).
    maxOutputTokens: 64,
    ...(tools ? { tools: { get_weather: weather }, stopWhen: isStepCount(2) } : {}),
    onError: ({ error }) => {
      errors.push(error)
    },
  })
  const parts: string[] = []
  for await (const part of result.fullStream) {
    parts.push(part.type)
    if (part.type === 'error') errors.push(part.error)
  }
  const finishReason = await Promise.resolve(result.finishReason).catch((error: unknown) => {
    errors.push(error)
    return 'rejected'
  })
  const steps = await Promise.resolve(result.steps).catch(() => [])
  const text = await Promise.resolve(result.text).catch(() => '')
  const usage = await Promise.resolve(result.totalUsage).catch((): LanguageModelUsage | undefined => undefined)
  return { parts, finishReason, steps, text, usage, executed, errors }
}

/** A streamed chat completion as the openai SDK reads it, every chunk's pieces added up. */
export interface ReadChatStream {
  text: string
  finish: string | null | undefined
  usage: OpenAI.CompletionUsage | null | undefined
  /** Each tool call, by its index: its id and name as first sent, its argument fragments joined. */
  calls: Array<{ id: string; name: string; arguments: string }>
  chunks: OpenAI.ChatCompletionChunk[]
}

export async function readChatStream(stream: AsyncIterable<OpenAI.ChatCompletionChunk>): Promise<ReadChatStream> {
  const read: ReadChatStream = { text: '', finish: undefined, usage: undefined, calls: [], chunks: [] }
  for await (const chunk of stream) {
    read.chunks.push(chunk)
    const choice = chunk.choices[0]
    read.text += choice?.delta.content ?? ''
    read.finish = choice?.finish_reason ?? read.finish
    read.usage = chunk.usage ?? read.usage
    for (const piece of choice?.delta.tool_calls ?? []) {
      const call = read.calls[piece.index] ?? { id: '', name: '', arguments: '' }
      call.id ||= piece.id ?? ''
      call.name ||= piece.function?.name ?? ''
      call.arguments += piece.function?.arguments ?? ''
      read.calls[piece.index] = call
    }
  }
  return read
}
