import type { AuditAction, RequestOutcome } from "../../../AdminApi/AdminApi.ts"
import type { AdminErrorCode } from "../../../AdminApi/Errors.ts"
import { captureEn } from "./pages/capture.ts"
import { catalogEn } from "./pages/catalog.ts"
import { leadsEn } from "./pages/leads.ts"
import { rescueEn } from "./pages/rescue.ts"
import { webhooksEn } from "./pages/webhooks.ts"

/**
 * Every word the console shows in English. `Messages` is this object's type: the Spanish catalog must
 * have exactly its keys (a key missing or extra in either fails `npm run check`). Words that need a
 * value are functions; the value arrives formatted (numbers and dates through `format.ts`).
 * Sections follow the pages; each page's section is edited by whoever owns the page.
 */
export const en = {
  meta: {
    /** The language's own name, in the language switcher. */
    languageName: "English",
    appTitle: "Lead Intake console",
    pageTitle: (page: string) => `${page} · Lead Intake console`
  },

  /** The title above an error's message, by the API's error code (adding a code fails the type check). */
  errors: {
    validation_error: "Check this field:",
    unauthenticated: "Signed out:",
    forbidden: "Not allowed:",
    csrf_failed: "Not allowed:",
    misdirected_request: "Wrong address:",
    not_found: "Not found:",
    conflict: "Conflict:",
    property_not_found: "No such property:",
    payload_too_large: "Too large:",
    unsupported_media_type: "Not accepted:",
    rate_limited: "Too many attempts:",
    internal_error: "Server error:",
    temporarily_unavailable: "Temporarily unavailable:",
    network_error: "No connection:",
    http_error: "Request failed:",
    unknown: "Something went wrong"
  } satisfies Record<AdminErrorCode | "network_error" | "http_error" | "unknown", string>,
  /**
   * What an error of the console's API says, by its code: the server's own text is shown only for a
   * code this catalog does not know. `fields` words the refusals the pages provoke most.
   */
  errorTexts: {
    validation_error: (field: string) =>
      field === "" ? "Something you entered is not valid." : `The value of ${field} is not valid.`,
    unauthenticated: "Your session ended. Sign in to go on.",
    forbidden: "Your account may not do this.",
    csrf_failed: "The console could not confirm the request came from this page. Reload it and try again.",
    misdirected_request: "This address does not belong to the console.",
    not_found: "It does not exist, or it is not in your organization.",
    conflict: "It clashes with what already exists (a repeated name or code, or a request already rescued).",
    property_not_found: "No active property of the organization has that code.",
    payload_too_large: "What was sent is over 64 KiB.",
    unsupported_media_type: "The server only takes JSON.",
    rate_limited: "Too many failed attempts. Wait a moment and try again.",
    internal_error: "Something failed on the server. If it happens again, give support the request number.",
    temporarily_unavailable: "The database is not answering right now. Try again in a few minutes.",
    fields: {
      url: "This URL is not accepted: it must start with https:// and point to a public address.",
      email: "Enter a valid e-mail address.",
      telefono: "Enter a phone number with at least 10 digits.",
      label: "Give it a name of at most 100 characters.",
      rate_limit: "The limit is a whole number of requests per minute, from 1 up.",
      from: "Enter a valid date and time.",
      to: "Enter a valid date and time.",
      reason: "Say why, without the person's personal data."
    } as Readonly<Record<string, string>>
  } satisfies Record<Exclude<AdminErrorCode, "validation_error">, string> & Record<string, unknown>,
  /** The message of an error that never reached the API or came back unreadable. */
  errorMessages: {
    network: "The console could not reach the server. Check your connection.",
    unreadable: "The server's answer could not be read.",
    status: (status: number) => `The server answered ${status}.`,
    invalidField: (field: string) => `The value of ${field} is not valid.`,
    requestRef: (requestId: string) => `(request ${requestId})`
  },

  common: {
    loading: "Loading…",
    nothingYet: "Nothing here yet.",
    none: "—",
    never: "never",
    justNow: "just now",
    close: "Close",
    cancel: "Cancel",
    confirm: "Confirm",
    done: "Done",
    loadMore: "Load more",
    copy: "Copy",
    copied: "Copied",
    copyNow: "Copy it now. ",
    copyFailed: (noun: string) => `Copy failed — select the ${noun} and copy it`,
    copyNoun: (noun: string) => `Copy ${noun}`,
    copiedToast: (noun: string) => `${noun[0]?.toUpperCase() ?? ""}${noun.slice(1)} copied to the clipboard.`,
    /** Saves every row the list's filters keep as a CSV file for a spreadsheet. */
    exportCsv: "Export CSV",
    testData: "Test data",
    testDataBadge: "TEST DATA",
    on: "On",
    off: "Off",
    system: "system",
    /** Beside a column of times: the organization's time zone. */
    timesIn: (zone: string) => `Times in ${zone}`,
    timeColumn: (label: string, zone: string) => `${label} (${zone})`
  },

  shell: {
    nav: {
      overview: "Overview",
      origins: "Origins",
      requests: "Requests",
      leads: "Leads",
      catalog: "Catalog",
      capture: "Capture",
      webhooks: "Webhooks",
      audit: "Audit"
    },
    console: "Console",
    skipToContent: "Skip to content",
    needsJavaScript: "The Lead Intake console needs JavaScript.",
    brand: "Lead Intake",
    brandLink: "Lead Intake console, overview",
    menu: "Menu",
    primaryNavigation: "Primary",
    organization: "Organization",
    platformAdministrator: "Platform administrator",
    roles: { admin: "admin", viewer: "viewer" },
    language: "Language",
    timeZone: "Time zone",
    timeZoneHint: "Times in the console are shown in this zone.",
    timeZoneSaved: (zone: string) => `Times are now shown in ${zone}.`,
    zonesOfMexico: "Mexico",
    otherZones: "Other zones",
    signOut: "Sign out",
    signOutEverywhere: "Sign out everywhere",
    signedOut: "Signed out.",
    signedOutEverywhere: "Signed out on every device.",
    sessionEnded: "Your session ended. Please sign in again.",
    nowShowing: (organization: string) => `Now showing ${organization}.`,
    notFoundTitle: "Page not found",
    notFoundText: "There is no console page at this address.",
    goToOverview: "Go to the overview"
  },

  login: {
    documentTitle: "Sign in",
    heading: "Sign in to the console",
    lede: "Operators of an organization manage its origins, keys and leads here.",
    email: "Email",
    password: "Password",
    submit: "Sign in",
    submitting: "Signing in…",
    missingTitle: "Missing details:",
    missingText: "Enter your e-mail and your password.",
    failedTitle: "Sign-in failed:",
    failedText: "Invalid email or password."
  },

  charts: {
    unattributed: "Unattributed",
    noRequests: "No requests in the last 24 hours.",
    requestsSummary: (origins: number, total: string, peak: string) =>
      `Requests per minute over the last 24 hours for ${origins} origin${origins === 1 ? "" : "s"}: ${total} requests, peak ${peak} per minute.`,
    leadsSummary: (created: string, enriched: string) =>
      `Leads over the last 30 days: ${created} created, ${enriched} enriched.`,
    dayBar: (day: string, created: string, enriched: string) =>
      `${day}: ${created} created, ${enriched} enriched`,
    created: "Created",
    enriched: "Enriched"
  },

  overview: {
    title: "Overview",
    lede: "The last 24 hours of traffic and the last 30 days of leads. Live data only: what test keys send is not counted.",
    requests24h: "Requests, 24 h",
    errors24h: "Errors, 24 h",
    created30d: "Leads created, 30 days",
    enriched30d: "Leads enriched, 30 days",
    requestsPerMinute: "Requests per minute, by origin (24 h)",
    leadsPerDay: "Leads per day (30 days)",
    errorCodes: "Error codes (24 h)",
    errorCodesCaption: "Error codes in the last 24 hours",
    noErrors: "No errors in the last 24 hours.",
    code: "Code",
    requests: "Requests",
    share: "Share",
    details: "Details",
    viewRequests: "View requests"
  },

  origins: {
    title: "Origins",
    lede: "Each origin is a system that sends leads (a web form, a chatbot, a call centre) with its own API key.",
    newOrigin: "New origin",
    readOnly: "You have read-only access: changes are made by an administrator.",
    caption: "Origins",
    emptyAdmin: "No origins yet. Create one to get an API key.",
    empty: "No origins yet.",
    label: "Label",
    labelHint: "Where the leads come from, e.g. “Website contact form”.",
    labelRule: "Give the origin a label.",
    keyPrefixes: "Key prefixes",
    noKey: "no key",
    noTestKey: "no test key",
    testKey: "Test key",
    created: "Created",
    lastLiveUse: "Last live use",
    liveRequests24h: "Live requests 24 h",
    rateLimit: "Rate limit",
    perMinute: (limit: string) => `${limit}/min`,
    rateLimitHintNew: "Requests per minute for this origin's key. Leave empty for the default.",
    rateLimitHint: "Requests per minute. The new limit applies from the next request.",
    rateLimitRule: "The rate limit is a whole number of requests per minute, at least 1.",
    change: "Change",
    changeRateLimit: "Change rate limit",
    rateLimitOf: (label: string) => `Rate limit of ${label}`,
    rateLimitSaved: (label: string, limit: string) => `Rate limit of ${label} is now ${limit} per minute.`,
    state: "State",
    revoked: "Revoked",
    active: "Active",
    actions: "Actions",
    viewOnly: "View only",
    create: "Create",
    save: "Save",
    rotateKey: "Rotate key",
    revokeKey: "Revoke key",
    rotateTestKey: "Rotate test key",
    createTestKey: "Create test key",
    revokeTestKey: "Revoke test key",
    originCreated: "Origin created",
    keyRotated: "Key rotated",
    testKeyRotated: "Test key rotated",
    testKeyCreated: "Test key created",
    keyNoun: "key",
    testKeyNoun: "test key",
    newKeyLabel: "New API key",
    newTestKeyLabel: "New test API key",
    keyFor: "The API key for ",
    testKeyFor: "The test key for ",
    testKeyHint:
      "Leads sent with it are test data: kept apart from live leads, never assigned, and shown only with the Test data switch on.",
    onlyTimeBefore: (test: boolean) =>
      `This is the only time the ${test ? "test key" : "key"} is shown. After you close this dialog only its prefix `,
    onlyTimeAfter: (test: boolean) =>
      ` remains visible. If it is lost, ${test ? "rotate the test key" : "rotate the key"}.`,
    rotateTitle: (label: string) => `Rotate the key of ${label}?`,
    rotateText: (prefix: string) =>
      `A new key replaces ${prefix}…; the current key stops working at once. Integrations using it must be updated.`,
    revokeTitle: (label: string) => `Revoke the key of ${label}?`,
    revokeText: (prefix: string) =>
      `Requests with ${prefix}… will be refused as invalid_key from now on. This cannot be undone; rotate to issue a new key.`,
    keyRevoked: (label: string) => `The key of ${label} is revoked.`,
    rotateTestTitle: (label: string) => `Rotate the test key of ${label}?`,
    rotateTestText: (prefix: string) =>
      `A new test key replaces ${prefix}…; the current test key stops working at once. The live key is not affected.`,
    revokeTestTitle: (label: string) => `Revoke the test key of ${label}?`,
    revokeTestText: (prefix: string) =>
      `Requests with ${prefix}… will be refused as invalid_key from now on. The live key and the test data already sent stay; create a new test key at any time.`,
    testRevoked: (label: string) => `The test key of ${label} is revoked.`
  },

  requests: {
    title: "Requests",
    lede: "Every POST /v1/leads, newest first.",
    ledeTest: "Every POST /v1/leads made with a test key, newest first.",
    liveEvery: "Live: new requests appear every 3 seconds",
    liveNew: (count: number, at: string) => `Live: ${count} new request${count === 1 ? "" : "s"} at ${at}`,
    livePaused: (message: string) => `Live updates paused: ${message}`,
    testBanner:
      "Test requests only: made with the origins' test keys (lk_test_…). They count in no figure of the overview, and stay here when the test data is purged.",
    allOrigins: "All origins",
    revokedSuffix: (label: string) => `${label} (revoked)`,
    unattributedPrefixes: "Unattributed prefixes",
    unknownOrigin: "Unknown origin",
    anyStatus: "Any status",
    /** The request log's outcomes (the public API's codes), in words; the code stays in the filter's value. */
    outcomes: {
      created: "Lead created",
      enriched: "Lead enriched",
      replay: "Repeated (same Idempotency-Key)",
      dry_run: "Checked only (dry run)",
      invalid_key: "Invalid key",
      validation_error: "Invalid data",
      rate_limited: "Over the rate limit",
      idempotency_conflict: "Idempotency-Key reused with another body",
      idempotency_in_progress: "Same key still being processed",
      property_not_found: "Unknown property",
      payload_too_large: "Body too large",
      unsupported_media_type: "Not JSON",
      temporarily_unavailable: "Database unavailable",
      internal_error: "Server error"
    } satisfies Record<RequestOutcome, string> as Readonly<Record<string, string>>,
    status2xx: "2xx success",
    status4xx: "4xx client error",
    status5xx: "5xx server error",
    anyOutcome: "Any outcome",
    filterRequests: "Filter requests",
    origin: "Origin",
    statusClass: "Status class",
    outcome: "Outcome",
    from: "From",
    to: "To",
    requestId: "Request id",
    idempotencyKey: "Idempotency key",
    applyFilters: "Apply filters",
    clear: "Clear",
    filters: "Filters",
    filtersActive: (count: number) => `Filters (${count} active)`,
    caption: "Requests",
    empty: "No requests match. Requests appear here as soon as they are received.",
    emptyTest:
      "No test requests match. Requests made with a test key appear here as soon as they are received.",
    allShown: (count: string, one: boolean) => `${count} request${one ? "" : "s"}, all shown.`,
    received: "Received",
    status: "Status",
    originAndKey: "Origin and key",
    keyPrefix: "Key prefix",
    noKey: "no key",
    lead: "Lead",
    open: "Open",
    duration: "Duration",
    detailsOf: (requestId: string) => `Request ${requestId}, details`,
    dialogTitle: "Request",
    mode: "Mode",
    madeWithTestKey: " made with a test key",
    live: "Live",
    unattributed: "Unattributed",
    testShort: "TEST"
  },

  catalog: catalogEn,

  webhooks: webhooksEn,

  capture: captureEn,

  rescue: rescueEn,

  leads: leadsEn,

  audit: {
    /** What each audited action is called; an action not listed shows its code. */
    actions: {
      "agent.create": "Agent added",
      "key.revoke": "Key revoked",
      "key.rotate": "Key rotated",
      "key.test_revoked": "Test key revoked",
      "key.test_rotated": "Test key rotated",
      "lead.erase": "Lead erased",
      "lead.export": "Lead exported",
      "leads.export_csv": "Leads exported (CSV)",
      "requests.export_csv": "Requests exported (CSV)",
      "operator.set_language": "Language changed",
      "organization.set_time_zone": "Time zone changed",
      "origin.create": "Origin created",
      "origin.set_rate_limit": "Rate limit changed",
      "property.create": "Property added",
      "property.archive": "Property archived",
      "property.restore": "Property restored",
      "request.rescue": "Lead rescued",
      "rule.create": "Capture rule added",
      "rule.delete": "Capture rule deleted",
      "session.sign_in": "Signed in",
      "session.sign_in_throttled": "Sign-in blocked (too many attempts)",
      "session.sign_out": "Signed out",
      "session.sign_out_everywhere": "Signed out everywhere",
      "test_data.purged": "Test data removed",
      "webhook.create": "Webhook endpoint added",
      "webhook.disable": "Webhook endpoint disabled",
      "webhook.enable": "Webhook endpoint enabled",
      "webhook.remove": "Webhook endpoint removed",
      "webhook.resend": "Delivery resent",
      "webhook.resend_failed": "Failed deliveries resent",
      "webhook.rotate_secret": "Signing secret rotated",
      "webhook.test": "Test event sent",
      "webhook.auto_disabled": "Webhook endpoint paused automatically"
    } satisfies Record<AuditAction, string> as Readonly<Record<string, string>>,
    title: "Audit",
    lede: "Every operator action: who, what, when and from where. Entries are kept.",
    caption: "Audit log",
    empty: "No operator actions recorded yet.",
    when: "When",
    who: "Who",
    action: "Action",
    target: "Target",
    from: "From",
    erasures: "Erasures",
    loadingErasures: "Loading erasures…",
    erasuresIntroBefore: "Leads whose personal data was erased, from the console or ",
    erasuresIntroAfter: "; newest first.",
    noErasures: "No lead has been erased.",
    lead: "Lead",
    by: "By",
    reason: "Reason"
  }
}

export type Messages = typeof en
