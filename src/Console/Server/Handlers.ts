import { Layer } from "effect"
import { layerAuditHandlers } from "../Audit/Http.ts"
import { layerCaptureHandlers } from "../Capture/Http.ts"
import { layerCatalogHandlers } from "../Catalog/Http.ts"
import { layerLeadsHandlers } from "../Leads/Http.ts"
import { layerOriginsHandlers } from "../Origins/Http.ts"
import { layerOverviewHandlers } from "../Overview/Http.ts"
import { layerRequestsHandlers } from "../Requests/Http.ts"
import { layerWebhooksHandlers } from "../Webhooks/Http.ts"
import { layerAdminDocsHandlers } from "./Docs.ts"
import { layerSessionHandlers } from "./Session.ts"
import { layerSettingsHandlers } from "./Settings.ts"

/** Every group of the admin API, one layer each. */
export const layerAdminHandlers = Layer.mergeAll(
  layerSessionHandlers,
  layerOverviewHandlers,
  layerOriginsHandlers,
  layerRequestsHandlers,
  layerLeadsHandlers,
  layerCatalogHandlers,
  layerCaptureHandlers,
  layerWebhooksHandlers,
  layerAuditHandlers,
  layerSettingsHandlers,
  layerAdminDocsHandlers
)
