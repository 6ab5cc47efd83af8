import { Elysia } from 'elysia'
import { answerFailure, errorResponse } from '../error-answers'
import { ApiError, callerFacing, internalError, unparsableBody } from '../errors'
import { errorFamily } from '../gateway/dispatch-routes'
import type { Logger } from '../log'

interface ValidationLike {
  all?: Array<{ path?: string; summary?: string; message?: string; schema?: { error?: unknown } }>
  message: string
}

/** The first failure of a validation, or none when the validator cannot even describe it. */
function firstFailure(error: ValidationLike): NonNullable<ValidationLike['all']>[number] | undefined {
  try {
    return error.all?.[0]
  } catch {
    // Describing a value turns it into text, which a value of the caller's making can refuse to become.
    return undefined
  }
}

function describeValidation(error: ValidationLike, where: string): string {
  const first = firstFailure(error)
  if (!first) return `invalid ${where}`
  const path = first.path && first.path.length > 0 ? first.path.slice(1).replaceAll('/', '.') : ''
  // A schema's own `error` says what is wrong in the caller's terms ("domain must be a DNS name");
  // without one, the validator's summary ("Expected string to match '^[A-Za-z0-9.-]+$'").
  const own = typeof first.schema?.error === 'string' ? first.schema.error : undefined
  return `invalid ${where}${path ? ` at "${path}"` : ''}: ${own ?? first.summary ?? first.message ?? 'does not match the schema'}`
}

/** The one place where thrown errors become responses. Our own faults are logged and never detailed. */
export const errorMapper = (log: Logger) =>
  new Elysia({ name: 'error-mapper' }).onError({ as: 'global' }, ({ code, error, request, path }) => {
    const family = errorFamily(path, request.method)
    // Hooks that run while the body is parsed (authentication) reach here wrapped in a parse error.
    if (callerFacing(error)) return answerFailure(log, family, error, { path })
    switch (code) {
      case 'VALIDATION': {
        const where = (error as { type?: string }).type ?? 'request'
        // An answer that does not match its own documented schema is our fault, not the caller's.
        if (where === 'response') {
          log.error('answer does not match its response schema', { method: request.method, path, error: error.message })
          return errorResponse(family, internalError())
        }
        return errorResponse(family, new ApiError('validation_failed', describeValidation(error as ValidationLike, where)))
      }
      case 'PARSE':
        return errorResponse(family, unparsableBody())
      case 'NOT_FOUND':
        return errorResponse(family, new ApiError('not_found', `no route ${request.method} ${path}`))
      default:
        return answerFailure(log, family, error, { method: request.method, path })
    }
  })
