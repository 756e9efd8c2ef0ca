import { Layer } from "effect"
import { KeyStore } from "../Accounts/KeyStore.ts"
import { Organizations } from "../Accounts/Organizations.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { CaptureRules } from "./CaptureRules.ts"
import { IdempotencyStore } from "./IdempotencyStore.ts"
import { LeadRepository } from "./LeadRepository.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { RequestLog } from "./RequestLog.ts"

/** Every service the request path and the operators' commands use, on PostgreSQL; needs a `SqlClient`. */
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
