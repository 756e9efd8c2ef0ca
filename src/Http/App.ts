import { Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.ts"
import { CaptureRules } from "../CaptureRules.ts"
import { IdempotencyStore } from "../IdempotencyStore.ts"
import { KeyStore } from "../KeyStore.ts"
import { LeadRepository } from "../LeadRepository.ts"
import { MemoryStore } from "../MemoryStore.ts"
import { Organizations } from "../Organizations.ts"
import { PropertyCatalog } from "../PropertyCatalog.ts"
import { RateLimiter } from "../RateLimiter.ts"
import { RequestLog } from "../RequestLog.ts"
import {
  layerAuthentication,
  layerBodyGuard,
  layerJournal,
  layerLeadHandlers,
  layerRateLimit
} from "./Leads.ts"
import { layerPublicHandlers } from "./Public.ts"
import { layerGlobalMiddleware } from "./Routing.ts"

/** Every domain service on PostgreSQL; needs a `SqlClient`. */
export const layerServices = Layer.mergeAll(
  KeyStore.layer,
  RateLimiter.layer,
  IdempotencyStore.layer,
  LeadRepository.layer,
  PropertyCatalog.layer,
  RequestLog.layer,
  Organizations.layer,
  CaptureRules.layer
)

/** The same services as in-memory fakes sharing one `MemoryStore`. */
export const layerServicesMemory = Layer.mergeAll(
  KeyStore.layerMemory,
  RateLimiter.layerMemory,
  IdempotencyStore.layerMemory,
  LeadRepository.layerMemory,
  PropertyCatalog.layerMemory,
  RequestLog.layerMemory,
  Organizations.layerMemory,
  CaptureRules.layerMemory
).pipe(Layer.provideMerge(MemoryStore.layer))

/** The routes of the contract with their middleware; needs the services and `AppConfig`. */
export const layerApp = Layer.mergeAll(
  HttpApiBuilder.layer(Api).pipe(
    Layer.provide([layerPublicHandlers, layerLeadHandlers]),
    Layer.provide([layerJournal, layerAuthentication, layerRateLimit, layerBodyGuard])
  ),
  layerGlobalMiddleware
)
