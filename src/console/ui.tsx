import { useEffect, useState } from 'preact/hooks'
import { api } from './api'

/** The API's message for what just failed, where a screen reader announces it. */
export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null
}

/**
 * A list the API answers at `path`, and the changes made to it: each change reloads the list, and a
 * failure (of the read or of a change) is kept to be shown.
 */
export function useList<T>(path: string) {
  const [items, setItems] = useState<T[]>()
  const [error, setError] = useState<string>()
  const load = () =>
    api<T[]>('GET', path)
      .then(setItems)
      .catch((failure: Error) => setError(failure.message))
  useEffect(() => {
    load()
  }, [path])
  /** Runs a change, then reloads; answers whether it went through. */
  const change = async (action: () => Promise<unknown>): Promise<boolean> => {
    setError(undefined)
    try {
      await action()
      await load()
      return true
    } catch (failure) {
      setError((failure as Error).message)
      return false
    }
  }
  return { items, error, change }
}
