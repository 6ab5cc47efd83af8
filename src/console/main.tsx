import { render } from 'preact'
import { useState } from 'preact/hooks'
import { api, type Session, session } from './api'
import { Overview } from './overview'
import { SignIn } from './sign-in'

function Console() {
  const [current, setCurrent] = useState<Session | undefined>(session.get())
  if (!current) {
    return (
      <SignIn
        onSignedIn={(signedIn) => {
          session.set(signedIn)
          setCurrent(signedIn)
        }}
      />
    )
  }
  // Sign out ends the session on the server, then forgets the token here whatever the answer.
  const signOut = async () => {
    await api('POST', '/v1/auth/logout').catch(() => undefined)
    session.clear()
    setCurrent(undefined)
  }
  return (
    <>
      <header>
        <span class="brand">gw</span>
        <span class="org">{current.orgName}</span>
        <span class="spacer" />
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <Overview />
      </main>
    </>
  )
}

const root = document.getElementById('app')
if (root) render(<Console />, root)
