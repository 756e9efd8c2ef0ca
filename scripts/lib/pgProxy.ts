import { connect, createServer, type Server } from "node:net"

/**
 * A TCP proxy in front of PostgreSQL that counts the client's round trips: every extended-query
 * `Sync` and every simple `Query` message waits for one `ReadyForQuery`, so their number is the
 * number of times a request waited on the database.
 */
export interface RoundTripCounter {
  readonly port: number
  readonly count: () => number
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const startupCodes = new Set([196_608, 80_877_103, 80_877_104])

export const startRoundTripProxy = (upstreamPort: number): Promise<RoundTripCounter> => {
  let roundTrips = 0
  const sockets = new Set<{ destroy(): void }>()
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, "127.0.0.1")
    sockets.add(client)
    sockets.add(upstream)
    let pending: Buffer = Buffer.alloc(0)
    let startup = true
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk)
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      while (true) {
        if (startup) {
          if (pending.length < 8) break
          const length = pending.readInt32BE(0)
          if (pending.length < length) break
          const code = pending.readInt32BE(4)
          if (code === 196_608 || !startupCodes.has(code)) startup = false
          pending = pending.subarray(length)
          continue
        }
        if (pending.length < 5) break
        const length = pending.readInt32BE(1)
        if (pending.length < length + 1) break
        const type = String.fromCharCode(pending[0]!)
        if (type === "S" || type === "Q") roundTrips++
        pending = pending.subarray(length + 1)
      }
    })
    upstream.on("data", (chunk: Buffer) => client.write(chunk))
    const closeBoth = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", closeBoth)
    upstream.on("close", closeBoth)
    client.on("error", closeBoth)
    upstream.on("error", closeBoth)
  })
  return new Promise((resolve, reject) => {
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (typeof address !== "object" || address === null) return reject(new Error("proxy has no port"))
      resolve({
        port: address.port,
        count: () => roundTrips,
        reset: () => {
          roundTrips = 0
        },
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}
