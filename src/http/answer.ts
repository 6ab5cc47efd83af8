import { status } from 'elysia'

// A route handler's answers, in the envelope whose schema `schema.ts` makes (`Ok`, `Created`). Apart
// from the schemas because they need Elysia, which the services (which import the schemas) do not load.

/** A handler's 200 answer: the service's result in the envelope. */
export const answer = async <T>(data: T | Promise<T>) => ({ data: await data, error: null })

/** A handler's 201 answer, for a route whose `response` is `Created(...)`. */
export const answerCreated = async <T>(data: T | Promise<T>) => status(201, { data: await data, error: null })
