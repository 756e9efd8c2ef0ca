import createDomain from "./0001_create_domain.ts"
import createOrEnrichFunction from "./0002_create_or_enrich_function.ts"
import createOrEnrichReturnsData from "./0003_create_or_enrich_returns_data.ts"
import createWebhooks from "./0004_create_webhooks.ts"
import operatorConsole from "./0005_operator_console.ts"
import personalData from "./0006_personal_data.ts"
import intakeInOneStatement from "./0007_intake_in_one_statement.ts"
import admitAndIntake from "./0008_admit_and_intake.ts"
import roundRobinTurns from "./0009_round_robin_turns.ts"
import spentKeysWithoutLock from "./0010_spent_keys_without_lock.ts"
import loginThrottlePairs from "./0011_login_throttle_pairs.ts"
import leastPrivilege from "./0013_least_privilege.ts"
import webhookPartnerEvents from "./0014_webhook_partner_events.ts"
import testMode from "./0015_test_mode.ts"
import announcedUrls from "./0016_announced_urls.ts"
import leadsAssigneeIndex from "./0017_leads_assignee_index.ts"
import requestLogRowKeys from "./0018_request_log_row_keys.ts"
import consoleLanguageAndTimeZone from "./0019_console_language_and_time_zone.ts"
import webhookAttempts from "./0020_webhook_attempts.ts"
import rejectedBodies from "./0021_rejected_bodies.ts"
import organizationColumns from "./0022_organization_columns.ts"
import organizationBackfill from "./0023_organization_backfill.ts"
import organizationForeignKeys from "./0024_organization_foreign_keys.ts"
import organizationKeysValidated from "./0025_organization_keys_validated.ts"
import organizationKeys from "./0026_organization_keys.ts"
import admissionOnTheCoordinator from "./0027_admission_on_the_coordinator.ts"
import writeDocuments from "./0028_write_documents.ts"
import requestLogPartitioned from "./0029_request_log_partitioned.ts"

export const migrations = {
  "0001_create_domain": createDomain,
  "0002_create_or_enrich_function": createOrEnrichFunction,
  "0003_create_or_enrich_returns_data": createOrEnrichReturnsData,
  "0004_create_webhooks": createWebhooks,
  "0005_operator_console": operatorConsole,
  "0006_personal_data": personalData,
  "0007_intake_in_one_statement": intakeInOneStatement,
  "0008_admit_and_intake": admitAndIntake,
  "0009_round_robin_turns": roundRobinTurns,
  "0010_spent_keys_without_lock": spentKeysWithoutLock,
  "0011_login_throttle_pairs": loginThrottlePairs,
  "0013_least_privilege": leastPrivilege,
  "0014_webhook_partner_events": webhookPartnerEvents,
  "0015_test_mode": testMode,
  "0016_announced_urls": announcedUrls,
  "0017_leads_assignee_index": leadsAssigneeIndex,
  "0018_request_log_row_keys": requestLogRowKeys,
  "0019_console_language_and_time_zone": consoleLanguageAndTimeZone,
  "0020_webhook_attempts": webhookAttempts,
  "0021_rejected_bodies": rejectedBodies,
  "0022_organization_columns": organizationColumns,
  "0023_organization_backfill": organizationBackfill,
  "0024_organization_foreign_keys": organizationForeignKeys,
  "0025_organization_keys_validated": organizationKeysValidated,
  "0026_organization_keys": organizationKeys,
  "0027_admission_on_the_coordinator": admissionOnTheCoordinator,
  "0028_write_documents": writeDocuments,
  "0029_request_log_partitioned": requestLogPartitioned
}
