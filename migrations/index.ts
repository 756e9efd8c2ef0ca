import createDomain from "./0001_create_domain.ts"
import createOrEnrichFunction from "./0002_create_or_enrich_function.ts"
import createOrEnrichReturnsData from "./0003_create_or_enrich_returns_data.ts"
import createWebhooks from "./0004_create_webhooks.ts"
import personalData from "./0006_personal_data.ts"

export const migrations = {
  "0001_create_domain": createDomain,
  "0002_create_or_enrich_function": createOrEnrichFunction,
  "0003_create_or_enrich_returns_data": createOrEnrichReturnsData,
  "0004_create_webhooks": createWebhooks,
  "0006_personal_data": personalData
}
