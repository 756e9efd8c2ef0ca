import { Effect, Layer, References } from "effect"
import { layerServices } from "../Intake/Services.ts"
import { AppConfig } from "../Platform/Config.ts"
import * as Migrations from "../Platform/Migrations.ts"

/** `LOG_LEVEL` applied to whatever runs on top of `AppConfig`. */
export const layerLogLevel = Layer.effect(
  References.MinimumLogLevel,
  AppConfig.useSync((config) => config.logLevel)
)

/** `layer` with what every operator command runs on: `LOG_LEVEL`, the migrated database, the configuration. */
export const layerCommand = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.mergeAll(layer, layerLogLevel).pipe(
    Layer.provideMerge(Migrations.layer),
    Layer.provideMerge(AppConfig.layer)
  )

/**
 * What an operator command runs on: the same PostgreSQL services as the server, over the same
 * database (`DATABASE_URL`, or the embedded cluster shared with a running server).
 */
export const layerOperator = layerCommand(layerServices)

export const withOperator = Effect.provide(layerOperator)
