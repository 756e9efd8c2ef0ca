import type { Exit } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { KeyRejected } from "../KeyCheck.ts"
import type { AdmittedWrite } from "../LeadIntake.ts"
import type { OutcomeUnknown, StoreUnavailable } from "../Sql.ts"

/**
 * What the direct create (`DirectCreate.ts`) already did with a `POST /v1/leads` it passes on to
 * the router: the request id it used, when the request started, the body it read, and, when the
 * body passed every local check, what the admission's round trip answered (for a dry run, the key
 * check's answer, with nothing accepted). The router's middleware
 * takes these instead of doing the same work again: the body is read once and the key is counted
 * once, whichever path answers.
 */
export interface Handoff {
  readonly requestId: string
  readonly startedAt: number
  readonly body: Uint8Array
  readonly admission: Exit.Exit<AdmittedWrite, KeyRejected | StoreUnavailable | OutcomeUnknown> | undefined
}

const handoffs = new WeakMap<object, Handoff>()

/** Keyed by the platform's request object (`http.IncomingMessage`), which the router's request wraps. */
export const handOff = (source: object, handoff: Handoff) => {
  handoffs.set(source, handoff)
}

export const handoffOf = (request: HttpServerRequest.HttpServerRequest): Handoff | undefined =>
  handoffs.get(request.source)
