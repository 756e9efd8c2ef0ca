#!/usr/bin/env bash
# The two roles of docs/sre.md#postgresql, made when the postgres image initialises its volume
# (compose.yaml mounts this directory at /docker-entrypoint-initdb.d; it runs as POSTGRES_USER, a
# superuser, in POSTGRES_DB): the owner, which `lead-intake migrate` connects as, and the service's
# role, which may only read and write rows and run the functions. test/e2e/deploy.test.ts runs it.
set -euo pipefail

psql --no-psqlrc --set=ON_ERROR_STOP=1 --quiet \
  --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  --set=database="$POSTGRES_DB" \
  --set=owner="${LEAD_INTAKE_OWNER_ROLE:-lead_intake_owner}" \
  --set=owner_password="${LEAD_INTAKE_OWNER_PASSWORD:?set LEAD_INTAKE_OWNER_PASSWORD}" \
  --set=app="${LEAD_INTAKE_APP_ROLE:-lead_intake_app}" \
  --set=app_password="${LEAD_INTAKE_APP_PASSWORD:?set LEAD_INTAKE_APP_PASSWORD}" <<'SQL'
CREATE ROLE :"owner" LOGIN PASSWORD :'owner_password';
CREATE ROLE :"app" LOGIN PASSWORD :'app_password';
ALTER DATABASE :"database" OWNER TO :"owner";
ALTER SCHEMA public OWNER TO :"owner";
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO :"app";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO :"app";
SQL
