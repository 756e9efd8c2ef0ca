import createDomain from "./0001_create_domain.ts"
import createOrEnrichFunction from "./0002_create_or_enrich_function.ts"
import personalData from "./0006_personal_data.ts"

export const migrations = {
  "0001_create_domain": createDomain,
  "0002_create_or_enrich_function": createOrEnrichFunction,
  "0006_personal_data": personalData
}
