import type { ComponentChildren } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api } from './api'

/** What every page is given: the organisation, who signed in, and whether they hold a permission. */
export interface PageProps {
  orgId: string
  userId: string
  can(permission: string): boolean
  /** Reads the permissions again, after a change that moves them (an ownership transfer). */
  reloadPermissions(): void
}

/** What an input or a select holds now, read from its change event. */
export const fieldValue = (event: Event): string => (event.currentTarget as HTMLInputElement | HTMLSelectElement).value

/** The API's message for what just failed, where a screen reader announces it. */
export function ErrorNote({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null
}

/** Runs calls that change something, keeping the last failure (the API's own message) to be shown. */
export function useAction() {
  const [error, setError] = useState<string>()
  /** Answers whether the call went through. */
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setError(undefined)
    try {
      await action()
      return true
    } catch (failure) {
      setError((failure as Error).message)
      return false
    }
  }
  return { error, setError, run }
}

/**
 * A list the API answers at `path`, and the changes made to it: each change reloads the list, and a
 * failure (of the read or of a change) is kept to be shown.
 */
export function useList<T>(path: string) {
  const [items, setItems] = useState<T[]>()
  const { error, setError, run } = useAction()
  const load = () =>
    api<T[]>('GET', path)
      .then(setItems)
      .catch((failure: Error) => setError(failure.message))
  useEffect(() => {
    load()
  }, [path])
  /** Runs a change, then reloads; answers whether it went through. */
  const change = (action: () => Promise<unknown>): Promise<boolean> =>
    run(async () => {
      await action()
      await load()
    })
  return { items, error, change }
}

/** Hands a file to the browser to save: the API's exports need the bearer token, so no plain link can fetch them. */
export function saveFile(name: string, content: Blob): void {
  const link = document.createElement('a')
  link.href = URL.createObjectURL(content)
  link.download = name
  link.click()
  URL.revokeObjectURL(link.href)
}

/** A secret gw shows this once and keeps only as a hash: what it is, the secret to copy, and a way to put it away. */
export function ShownOnce({
  secret,
  done,
  onDone,
  children,
}: {
  secret: string
  /** The label of the button that puts it away ("I have saved it"). */
  done: string
  onDone(): void
  children: ComponentChildren
}) {
  return (
    <div class="card secret" role="status">
      <p>{children}</p>
      <code data-secret>{secret}</code>
      <div class="actions">
        <button type="button" onClick={() => navigator.clipboard?.writeText(secret)}>
          Copy
        </button>
        <button type="button" class="quiet" onClick={onDone}>
          {done}
        </button>
      </div>
    </div>
  )
}
