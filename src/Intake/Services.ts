import { Layer } from "effect"
import { KeyStore } from "../Accounts/KeyStore.ts"
import { Organizations } from "../Accounts/Organizations.ts"
import { MemoryStore } from "../Platform/MemoryStore.ts"
import { CaptureRules } from "./CaptureRules.ts"
import { IdempotencyStore } from "./IdempotencyStore.ts"
import { KeyCheck } from "./KeyCheck.ts"
import { LeadIntake } from "./LeadIntake.ts"
import { LeadRepository } from "./LeadRepository.ts"
import { PropertyCatalog } from "./PropertyCatalog.ts"
import { RequestLog } from "./RequestLog.ts"

/** Every domain service on PostgreSQL; needs a `SqlClient`. */
export const layerServices = LeadIntake.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      KeyCheck.layer,
      KeyStore.layer,
      IdempotencyStore.layer,
      LeadRepository.layer,
      PropertyCatalog.layer,
      RequestLog.layer,
      Organizations.layer,
      CaptureRules.layer
    )
  )
)

/** The same services as in-memory fakes sharing one `MemoryStore`. */
export const layerServicesMemory = LeadIntake.layerMemory.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      KeyCheck.layerMemory,
      KeyStore.layerMemory,
      IdempotencyStore.layerMemory,
      LeadRepository.layerMemory,
      PropertyCatalog.layerMemory,
      RequestLog.layerMemory,
      Organizations.layerMemory,
      CaptureRules.layerMemory
    )
  ),
  Layer.provideMerge(MemoryStore.layer)
)
