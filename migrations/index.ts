import createDomain from "./0001_create_domain.ts"
import createOrEnrichFunction from "./0002_create_or_enrich_function.ts"
import createWebhooks from "./0004_create_webhooks.ts"

export const migrations = {
  "0001_create_domain": createDomain,
  "0002_create_or_enrich_function": createOrEnrichFunction,
  "0004_create_webhooks": createWebhooks
}
