import type { Socket, TCPSocketListener } from 'bun'

/**
 * A TCP proxy on loopback in front of a service (Postgres, say), so a test can take the service away
 * from gw without touching the shared server: `cut()` closes every connection and stops listening
 * (new ones are refused, as from a database that is down), `restore()` listens again on the same port.
 */
export interface TcpProxy {
  port: number
  cut(): void
  restore(): void
  close(): void
}

interface Pair {
  upstream?: Socket<Pair>
  client?: Socket<Pair>
  /** What the client sent before the upstream connection was open. */
  pending: Uint8Array[]
}

export function startTcpProxy(target: { host: string; port: number }): TcpProxy {
  const pairs = new Set<Pair>()
  let listener: TCPSocketListener<Pair> | undefined
  let port = 0

  const listen = () => {
    listener = Bun.listen<Pair>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          const pair: Pair = { client, pending: [] }
          client.data = pair
          pairs.add(pair)
          void Bun.connect<Pair>({
            hostname: target.host,
            port: target.port,
            data: pair,
            socket: {
              open(upstream) {
                pair.upstream = upstream
                for (const chunk of pair.pending) upstream.write(chunk)
                pair.pending = []
              },
              data(_upstream, chunk) {
                pair.client?.write(chunk)
              },
              close() {
                pair.client?.end()
                pairs.delete(pair)
              },
              error() {
                pair.client?.end()
              },
            },
          }).catch(() => client.end())
        },
        data(client, chunk) {
          const pair = client.data
          if (pair.upstream) pair.upstream.write(chunk)
          else pair.pending.push(new Uint8Array(chunk))
        },
        close(client) {
          client.data.upstream?.end()
          pairs.delete(client.data)
        },
      },
    })
    port = listener.port
  }
  listen()

  const cut = () => {
    listener?.stop(true)
    listener = undefined
    for (const pair of pairs) {
      pair.client?.terminate()
      pair.upstream?.terminate()
    }
    pairs.clear()
  }
  return {
    get port() {
      return port
    },
    cut,
    restore: () => {
      if (!listener) listen()
    },
    close: cut,
  }
}
