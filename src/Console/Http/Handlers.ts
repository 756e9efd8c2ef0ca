import { Layer } from "effect"
import { layerAuditHandlers } from "./Audit.ts"
import { layerCaptureHandlers } from "./Capture.ts"
import { layerCatalogHandlers } from "./Catalog.ts"
import { layerAdminDocsHandlers } from "./Docs.ts"
import { layerLeadsHandlers } from "./Leads.ts"
import { layerOriginsHandlers } from "./Origins.ts"
import { layerOverviewHandlers } from "./Overview.ts"
import { layerRequestsHandlers } from "./Requests.ts"
import { layerSessionHandlers } from "./Session.ts"
import { layerSettingsHandlers } from "./Settings.ts"
import { layerWebhooksHandlers } from "./Webhooks.ts"

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
