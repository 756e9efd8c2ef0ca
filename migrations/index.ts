import createDomain from "./0001_create_domain.ts"
import createOrEnrichFunction from "./0002_create_or_enrich_function.ts"
import operatorConsole from "./0005_operator_console.ts"

export const migrations = {
  "0001_create_domain": createDomain,
  "0002_create_or_enrich_function": createOrEnrichFunction,
  "0005_operator_console": operatorConsole
}
