import { createServer, type ServerOptions } from "node:http"
import { connect } from "node:net"
import { NodeHttpServer } from "@effect/platform-node"
import { Config, Context, Deferred, type Duration, Effect, Layer, Option } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { AppConfig } from "./Config.ts"
import { instanceId } from "./Sql/Sql.ts"

export interface Announced {
  readonly listener: string
  readonly url: string
}

/**
 * The listeners a process is configured to open and those that have announced they listen: `/readyz`
 * waits for all of them (`api`, `admin`, `metrics` in `serve`; `metrics` in `worker`), and `serve`
 * records its URLs once they are all up.
 */
export class Listeners extends Context.Service<
  Listeners,
  {
    readonly expected: ReadonlyArray<string>
    readonly announced: Map<string, Announced>
    readonly allUp: Deferred.Deferred<ReadonlyArray<Announced>>
  }
>()("lead-intake/Listeners") {
  static readonly layer = (expected: ReadonlyArray<string>) =>
    Layer.effect(
      Listeners,
      Effect.gen(function* () {
        const allUp = yield* Deferred.make<ReadonlyArray<Announced>>()
        if (expected.length === 0) yield* Deferred.succeed(allUp, [])
        return Listeners.of({ expected, announced: new Map(), allUp })
      })
    )
}

/** What `serve` opens: the API always, the console and Prometheus when configured. */
export const layerServeListeners = Layer.unwrap(
  AppConfig.useSync((config) =>
    Listeners.layer([
      "api",
      ...(Option.isSome(config.adminPort) ? ["admin"] : []),
      ...(Option.isSome(config.metricsPort) ? ["metrics"] : [])
    ])
  )
)

/** What `worker` opens besides its probes: Prometheus when configured. */
export const layerWorkerListeners = Layer.unwrap(
  AppConfig.useSync((config) => Listeners.layer(Option.isSome(config.metricsPort) ? ["metrics"] : []))
)

/**
 * The one start line every listener logs, in one shape: `{"msg":"listening","listener":…,"url":…}`,
 * logged once the listener accepts connections; also what `/readyz` counts.
 */
export const logListening = (listener: string, url: string, details: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ listener, url, ...details }))
    const listeners = yield* Effect.serviceOption(Listeners)
    if (Option.isNone(listeners)) return
    const { expected, announced, allUp } = listeners.value
    announced.set(listener, { listener, url })
    if (expected.every((name) => announced.has(name))) yield* Deferred.succeed(allUp, [...announced.values()])
  })

const urlOf = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`

/**
 * A listener of its own (the console's, the management probes'): a node server with these limits
 * on `host:port` answering with `served`, which logs `listening` once bound (port 0 names the port
 * the system chose); with no port (`…_PORT=off`), nothing but the line `disabled`.
 */
export const layerListener = <ROut, E, R>(
  served: Layer.Layer<ROut, E, R>,
  options: {
    readonly listener: string
    readonly host: string
    readonly port: Option.Option<number>
    readonly disabled: string
    readonly limits: ServerOptions
    readonly gracefulShutdownTimeout: Duration.Input
  }
) => {
  const { listener, host, limits, gracefulShutdownTimeout } = options
  if (Option.isNone(options.port)) return Layer.effectDiscard(Effect.logInfo(options.disabled))
  const port = options.port.value
  const announce = Layer.effectDiscard(
    Effect.gen(function* () {
      const server = yield* HttpServer.HttpServer
      const bound = "port" in server.address ? server.address.port : port
      yield* logListening(listener, urlOf(host, bound))
    })
  )
  return served.pipe(
    Layer.merge(announce),
    Layer.provide(NodeHttpServer.layer(() => createServer(limits), { port, host, gracefulShutdownTimeout }))
  )
}

const acceptTimeoutMillis = 1_000

/** A wildcard listening address is reached on this machine's loopback. */
const reachable = (url: URL) => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return { host: host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host, port: Number(url.port) }
}

/** Whether a TCP connection to the listener at `url` is accepted within a second. */
const accepts = (url: string) =>
  Effect.callback<boolean>((resume) => {
    const socket = connect(reachable(new URL(url)))
    const done = (ok: boolean) => {
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.setTimeout(acceptTimeoutMillis, () => done(false))
    socket.once("connect", () => done(true))
    socket.once("error", () => done(false))
    return Effect.sync(() => socket.destroy())
  })

export type ListenerState = "up" | "down" | "starting"

/** Each expected listener: `up` (announced and accepting a connection now), `down` or `starting`. */
export const listenerStates = Effect.gen(function* () {
  const listeners = yield* Effect.serviceOption(Listeners)
  if (Option.isNone(listeners)) return {} as Record<string, ListenerState>
  const { expected, announced } = listeners.value
  const states = yield* Effect.forEach(
    expected,
    (name): Effect.Effect<readonly [string, ListenerState]> => {
      const found = announced.get(name)
      return found === undefined
        ? Effect.succeed([name, "starting"])
        : Effect.map(accepts(found.url), (ok) => [name, ok ? "up" : "down"])
    },
    { concurrency: "unbounded" }
  )
  return Object.fromEntries(states) as Record<string, ListenerState>
})

const browsable = (url: string) => {
  const parsed = new URL(url)
  if (parsed.hostname === "0.0.0.0" || parsed.hostname === "[::]") parsed.hostname = "localhost"
  return parsed.origin
}

/**
 * Once every listener is up, `serve` writes where it listens into `announced_urls` (0016): the API
 * under `PUBLIC_BASE_URL` when that is set, and the console; removed when it stops. `demo` prints
 * these rather than what its own environment would guess.
 */
export const layerRecordAnnounced = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const publicUrl = yield* Config.option(Config.String("PUBLIC_BASE_URL"))
    const { allUp } = yield* Listeners
    const record = Effect.gen(function* () {
      const announced = yield* Deferred.await(allUp)
      const rows = announced.flatMap(({ listener, url }) =>
        listener === "api"
          ? [{ listener, url: Option.isSome(publicUrl) ? config.publicBaseUrl : browsable(url) }]
          : listener === "admin"
            ? [{ listener, url: `${browsable(url)}/` }]
            : []
      )
      yield* sql`DELETE FROM announced_urls WHERE instance = ${instanceId}`
      for (const row of rows)
        yield* sql`INSERT INTO announced_urls (instance, listener, url) VALUES (${instanceId}, ${row.listener}, ${row.url})`
      // Rows of instances that stopped without saying so (killed) are not read past a day.
      yield* sql`DELETE FROM announced_urls WHERE announced_at < now() - interval '1 day'`
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not record the announced URLs", cause)),
      Effect.withSpan("Listeners.record")
    )
    yield* Effect.forkScoped(record)
    yield* Effect.addFinalizer(() =>
      sql`DELETE FROM announced_urls WHERE instance = ${instanceId}`.pipe(Effect.ignore)
    )
  }).pipe(Effect.orDie)
)

/** The URL the newest running server announced for `listener` (`api`, `admin`), if any. */
export const announcedUrl = (listener: "api" | "admin") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ url: string }>`
      SELECT url FROM announced_urls
      WHERE listener = ${listener} AND announced_at > now() - interval '1 day'
      ORDER BY announced_at DESC LIMIT 1`.pipe(
      Effect.catchIf(
        // A database the newest migrations have not reached yet (before 0016).
        (error) => (error.reason.cause as { code?: string } | undefined)?.code === "42P01",
        () => Effect.succeed([])
      )
    )
    return Option.fromNullishOr(rows[0]?.url)
  })
