import { layer } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { TestClock } from "effect/testing"
import type { LeadInput } from "../../src/Domain/LeadInput.ts"
import { phoneMatchKey } from "../../src/Domain/Phone.ts"
import type { LeadWrite } from "../../src/Intake/LeadRepository.ts"
import { type IntakeServices, layerMemoryServices, layerPostgresServices } from "../support/Client.ts"

export type Services = IntakeServices

export interface Suite {
  readonly effect: <A, E>(name: string, self: () => Effect.Effect<A, E, Services | Scope.Scope>) => void
}

/**
 * Registers one behaviour suite twice, over the in-memory fakes and over PostgreSQL, so the
 * fake cannot drift from the database. Each run shares one store across its tests, so tests
 * seed their own organization. The layers are built on the live clock (the connection pool's
 * housekeeping would otherwise replay every tick of a TestClock jump); each test gets its own
 * TestClock, starting at 0, which the services read.
 */
export const acrossLayers = (name: string, suite: (it: Suite) => void) => {
  const variants: ReadonlyArray<readonly [string, Layer.Layer<Services>]> = [
    ["memory", layerMemoryServices],
    ["postgres", layerPostgresServices]
  ]
  for (const [variant, services] of variants) {
    layer(services, { excludeTestServices: true })(`${name} (${variant})`, (it) =>
      suite({
        effect: (testName, self) =>
          it.effect(testName, () => Effect.suspend(self).pipe(Effect.provide(TestClock.layer())))
      })
    )
  }
}

/** Moves the TestClock to an ISO instant and returns it in milliseconds. */
export const setClock = (iso: string) => {
  const millis = Date.parse(iso)
  return Effect.as(TestClock.setTime(millis), millis)
}

export const expectFailure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flip(self).pipe(
    Effect.mapError(() => "expected a failure" as const),
    Effect.orDie
  )

export const dashboardUrl = "https://crm.test"

/** A validated lead body: `nombre` and whatever else is given, the rest absent. */
export const leadInput = (input: Partial<LeadInput> & { readonly nombre: string }): LeadInput => ({
  telefono: null,
  email: null,
  mensaje: null,
  propiedad: null,
  extras: [],
  ...input
})

/** A write as the handler builds it, with the phone's match key for a Mexican organization. */
export const leadWrite = (
  target: { readonly organizationId: string; readonly originId: string },
  input: Partial<LeadInput> & { readonly nombre: string },
  options?: {
    readonly propertyId?: string | null
    readonly idempotency?: { readonly key: string; readonly token: string } | null
    readonly livemode?: boolean
  }
): LeadWrite => {
  const given = leadInput(input)
  const full =
    options?.propertyId == null
      ? given
      : { ...given, propiedad: { by: "id" as const, value: options.propertyId } }
  return {
    requestId: crypto.randomUUID(),
    organizationId: target.organizationId,
    originId: target.originId,
    livemode: options?.livemode ?? true,
    input: full,
    phoneKey: full.telefono === null ? null : phoneMatchKey(full.telefono, "MX"),
    idempotency: options?.idempotency ?? null
  }
}
