import { useState } from 'preact/hooks'
import type { Session as NewSession } from '../modules/auth/model'
import type { OrganizationSettings } from '../modules/organization/model'
import { api, type Session } from './api'

export function SignIn({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    setBusy(true)
    setError(undefined)
    try {
      const answer = await api<typeof NewSession.static>('POST', '/v1/auth/login', {
        email: form.get('email'),
        password: form.get('password'),
      })
      // The name is read with the new session itself, before it is kept.
      const settings = await fetch('/v1/organization/settings', { headers: { authorization: `Bearer ${answer.sessionToken}` } })
      const name = ((await settings.json()) as { data?: typeof OrganizationSettings.static }).data?.name
      onSignedIn({ token: answer.sessionToken, orgId: answer.orgId, orgName: name ?? answer.orgId, userId: answer.userId })
    } catch (failure) {
      setError((failure as Error).message)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>Sign in to gw</h1>
      <label>
        Email
        <input name="email" type="email" autocomplete="username" required />
      </label>
      <label>
        Password
        <input name="password" type="password" autocomplete="current-password" required />
      </label>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  )
}
