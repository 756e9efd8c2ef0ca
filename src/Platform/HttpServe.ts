import { Context, Effect, Layer, type Scope } from "effect"
import { HttpRouter } from "effect/http"

/**
 * Keeping small the context a request runs in.
 *
 * An HttpApi group keeps the context its layer was built in, and every request it answers runs its
 * handler in that context merged over the request's own (`HttpApiBuilder`'s per-request
 * `Effect.provideContext`). Effect's `Context.merge` copies the request's map (twice when the request
 * has services added over its base, which it always has) and sets the group's entries into the
 * copy, so a request pays for the size of both. Built where the whole server is built, each held
 * about 40 services: the copies were 42 % of what a `GET /v1` allocated, and without them the
 * server spent 64 µs of CPU per `GET /v1` instead of 80 (CONTRIBUTING.md#findings, "HttpApiBuilder
 * merges…").
 * Two things keep both maps small:
 * - a group is built with only the services its builder reads ({@link builtWith});
 * - a listener's requests start from its context without the services that layers take when they
 *   are built ({@link serve}).
 */

/**
 * A layer's own build, without the memo map `Layer.buildWithMemoMap` adds to the context the layer
 * is built in. Effect declares it on `Layer` but marks it internal, so its type is not published.
 */
const buildItself = <ROut, E, RIn>(
  layer: Layer.Layer<ROut, E, RIn>,
  memoMap: Layer.MemoMap,
  scope: Scope.Scope
) =>
  (
    layer as unknown as {
      readonly build: (
        memoMap: Layer.MemoMap,
        scope: Scope.Scope
      ) => Effect.Effect<Context.Context<ROut>, E, RIn>
    }
  ).build(memoMap, scope)

/**
 * Builds `layer` in `narrow` of the context it is built in, without the memo map: an HttpApi group
 * keeps every entry of the context it was built in, and a group that keeps even that one entry has
 * it merged into every request's context, a copy of the whole (CONTRIBUTING.md#findings,
 * "HttpApiBuilder merges…").
 */
const builtIn = <ROut, E, RIn>(
  layer: Layer.Layer<ROut, E, RIn>,
  narrow: (context: Context.Context<RIn>) => Context.Context<RIn>
): Layer.Layer<ROut, E, RIn> =>
  Layer.fromBuildMemo((memoMap, scope) =>
    buildItself(layer, memoMap, scope).pipe(Effect.updateContext(narrow))
  )

/**
 * Builds `layer` in a context holding only `keys` (those of the context it is built in). For an
 * HttpApi group, `keys` are what its builder reads (and the middleware it names): the compiler
 * refuses a layer that needs a service not among them. A group built with no keys at all runs its
 * handlers in the request's own context, with nothing merged into it per request.
 */
export const builtWith =
  <const Keys extends ReadonlyArray<Context.Key<unknown, unknown>>>(...keys: Keys) =>
  <ROut, E, RIn extends Context.Service.Identifier<Keys[number]>>(
    layer: Layer.Layer<ROut, E, RIn>
  ): Layer.Layer<ROut, E, RIn> =>
    builtIn(layer, Context.pick(...keys))

/**
 * Services taken by the layers that use them when they are built, never read from a request's
 * context: this application's own (every key of which starts `lead-intake/`), the SQL clients, and
 * the command line's (its flags and output, and the platform services src/Cli/Main.ts gives it: file
 * system, paths, standard streams, terminal, child processes). Effect's references (loggers, log
 * level, tracer, metric registry, configuration provider, ...) and the HTTP platform stay.
 */
const buildTimeOnly = [
  "lead-intake/",
  "effect/sql/",
  "@effect/sql-pg/",
  "effect/cli/",
  "~effect/cli/",
  "effect/FileSystem",
  "effect/Path",
  "~effect/Stdio",
  "effect/Terminal",
  "effect/process/"
]

const isBuildTimeOnly = (key: string) => buildTimeOnly.some((prefix) => key.startsWith(prefix))

/** `Context.omit` takes keys, so each name found under a build-time prefix is made a key again. */
const dropBuildTimeServices = <R>(context: Context.Context<R>): Context.Context<R> =>
  Context.omit(
    ...Array.from(context.mapUnsafe.keys())
      .filter(isBuildTimeOnly)
      .map((key) => Context.Service<never, unknown>(key))
  )(context)

/** What the routes of `app` read from a request's context, as `HttpRouter` types it. */
type PerRequest<R> = HttpRouter.Request.Only<"Requires", R> | HttpRouter.Request.Only<"GlobalRequires", R>

/**
 * `HttpRouter.serve(app)` (no request logger, no listen line: the service logs both itself) whose
 * requests start from the listener's context without the build-time services: `app` is handed the
 * services it is built with directly. Only for an app whose routes read no service from the
 * request's context (the compiler refuses any other): what they read is all in their groups.
 */
export const serve = <A, E, R>(
  app: Layer.Layer<A, E, R> &
    ([PerRequest<R>] extends [never] ? unknown : { readonly readsPerRequest: PerRequest<R> })
) =>
  Layer.unwrap(
    Effect.map(Effect.context<Exclude<HttpRouter.Request.Without<R>, HttpRouter.HttpRouter>>(), (services) =>
      HttpRouter.serve(app.pipe(Layer.provide(Layer.succeedContext(services))), {
        disableLogger: true,
        disableListenLog: true
      }).pipe((served) => builtIn(served, dropBuildTimeServices))
    )
  )
