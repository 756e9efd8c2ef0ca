import type { Messages } from "./en.ts"
import { captureEs } from "./pages/capture.ts"
import { catalogEs } from "./pages/catalog.ts"
import { leadsEs } from "./pages/leads.ts"
import { rescueEs } from "./pages/rescue.ts"
import { webhooksEs } from "./pages/webhooks.ts"

/** Every word the console shows in Spanish, as an operator in Mexico reads it (same keys as `en.ts`). */
export const es: Messages = {
  meta: {
    languageName: "Español",
    appTitle: "Consola de Lead Intake",
    pageTitle: (page) => `${page} · Consola de Lead Intake`
  },

  errors: {
    validation_error: "Revisa este campo:",
    unauthenticated: "Sesión cerrada:",
    forbidden: "No permitido:",
    csrf_failed: "No permitido:",
    misdirected_request: "Dirección equivocada:",
    not_found: "No encontrado:",
    conflict: "Conflicto:",
    property_not_found: "No existe la propiedad:",
    payload_too_large: "Demasiado grande:",
    unsupported_media_type: "No aceptado:",
    rate_limited: "Demasiados intentos:",
    internal_error: "Error del servidor:",
    temporarily_unavailable: "No disponible por el momento:",
    network_error: "Sin conexión:",
    http_error: "La solicitud falló:",
    unknown: "Algo salió mal"
  },
  errorMessages: {
    network: "La consola no pudo comunicarse con el servidor. Revisa tu conexión.",
    unreadable: "No se pudo leer la respuesta del servidor.",
    status: (status) => `El servidor respondió ${status}.`,
    invalidField: (field) => `El valor de ${field} no es válido.`,
    requestRef: (requestId) => `(solicitud ${requestId})`
  },

  common: {
    loading: "Cargando…",
    nothingYet: "Todavía no hay nada aquí.",
    none: "—",
    never: "nunca",
    justNow: "hace un momento",
    close: "Cerrar",
    cancel: "Cancelar",
    confirm: "Confirmar",
    done: "Listo",
    loadMore: "Cargar más",
    copy: "Copiar",
    copied: "Copiado",
    copyNow: "Haz la copia ahora. ",
    copyFailed: (noun) => `No se pudo copiar: selecciona ${noun} y copia el texto a mano`,
    copyNoun: (noun) => `Copiar ${noun}`,
    copiedToast: (noun) => `Se copió ${noun} al portapapeles.`,
    testData: "Datos de prueba",
    testDataBadge: "DATOS DE PRUEBA",
    on: "Sí",
    off: "No",
    system: "sistema",
    timesIn: (zone) => `Horas en ${zone}`,
    timeColumn: (label, zone) => `${label} (${zone})`
  },

  shell: {
    nav: {
      overview: "Resumen",
      origins: "Orígenes",
      requests: "Solicitudes",
      leads: "Prospectos",
      catalog: "Catálogo",
      capture: "Asignación",
      webhooks: "Webhooks",
      audit: "Auditoría"
    },
    console: "Consola",
    skipToContent: "Ir al contenido",
    needsJavaScript: "La consola de Lead Intake necesita JavaScript.",
    brand: "Lead Intake",
    brandLink: "Lead Intake: ir al resumen",
    menu: "Menú",
    primaryNavigation: "Principal",
    organization: "Organización",
    platformAdministrator: "Administrador de la plataforma",
    roles: { admin: "administrador", viewer: "solo lectura" },
    language: "Idioma",
    timeZone: "Zona horaria",
    timeZoneHint: "La consola muestra las horas en esta zona.",
    timeZoneSaved: (zone) => `Ahora las horas se muestran en ${zone}.`,
    zonesOfMexico: "México",
    otherZones: "Otras zonas",
    signOut: "Cerrar sesión",
    signOutEverywhere: "Cerrar todas mis sesiones",
    signedOut: "Sesión cerrada.",
    signedOutEverywhere: "Se cerró la sesión en todos tus dispositivos.",
    sessionEnded: "Tu sesión terminó. Vuelve a iniciar sesión.",
    nowShowing: (organization) => `Ahora ves ${organization}.`,
    notFoundTitle: "No encontramos esta página",
    notFoundText: "No hay ninguna página de la consola en esta dirección.",
    goToOverview: "Ir al resumen"
  },

  login: {
    documentTitle: "Iniciar sesión",
    heading: "Inicia sesión en la consola",
    lede: "Aquí los operadores de una organización administran sus orígenes, claves y prospectos.",
    email: "Correo electrónico",
    password: "Contraseña",
    submit: "Iniciar sesión",
    submitting: "Iniciando sesión…",
    missingTitle: "Faltan datos:",
    missingText: "Escribe tu correo y tu contraseña.",
    failedTitle: "No se pudo iniciar sesión:",
    failedText: "El correo o la contraseña no son correctos."
  },

  charts: {
    unattributed: "Sin origen",
    noRequests: "No hubo solicitudes en las últimas 24 horas.",
    requestsSummary: (origins, total, peak) =>
      `Solicitudes por minuto en las últimas 24 horas de ${origins} ${origins === 1 ? "origen" : "orígenes"}: ${total} solicitudes, máximo de ${peak} por minuto.`,
    leadsSummary: (created, enriched) =>
      `Prospectos de los últimos 30 días: ${created} nuevos, ${enriched} enriquecidos.`,
    dayBar: (day, created, enriched) => `${day}: ${created} nuevos, ${enriched} enriquecidos`,
    created: "Nuevos",
    enriched: "Enriquecidos"
  },

  overview: {
    title: "Resumen",
    lede: "El tráfico de las últimas 24 horas y los prospectos de los últimos 30 días. Solo datos reales: lo que envían las claves de prueba no se cuenta.",
    requests24h: "Solicitudes, 24 h",
    errors24h: "Errores, 24 h",
    created30d: "Prospectos nuevos, 30 días",
    enriched30d: "Prospectos enriquecidos, 30 días",
    requestsPerMinute: "Solicitudes por minuto, por origen (24 h)",
    leadsPerDay: "Prospectos por día (30 días)",
    errorCodes: "Códigos de error (24 h)",
    errorCodesCaption: "Códigos de error de las últimas 24 horas",
    noErrors: "Sin errores en las últimas 24 horas.",
    code: "Código",
    requests: "Solicitudes",
    share: "Proporción",
    details: "Detalle",
    viewRequests: "Ver solicitudes"
  },

  origins: {
    title: "Orígenes",
    lede: "Cada origen es un sistema que envía prospectos (un formulario web, un chatbot, un call center) con su propia clave de API.",
    newOrigin: "Nuevo origen",
    readOnly: "Tienes acceso de solo lectura: los cambios los hace un administrador.",
    caption: "Orígenes",
    emptyAdmin: "Todavía no hay orígenes. Crea uno para obtener una clave de API.",
    empty: "Todavía no hay orígenes.",
    label: "Nombre",
    labelHint: "De dónde llegan los prospectos, por ejemplo “Formulario de contacto del sitio”.",
    labelRule: "Ponle un nombre al origen.",
    keyPrefixes: "Prefijos de clave",
    noKey: "sin clave",
    noTestKey: "sin clave de prueba",
    testKey: "Clave de prueba",
    created: "Creado",
    lastLiveUse: "Último uso real",
    liveRequests24h: "Solicitudes reales 24 h",
    rateLimit: "Límite de solicitudes",
    perMinute: (limit) => `${limit}/min`,
    rateLimitHintNew:
      "Solicitudes por minuto para la clave de este origen. Déjalo vacío para usar el predeterminado.",
    rateLimitHint: "Solicitudes por minuto. El nuevo límite aplica desde la siguiente solicitud.",
    rateLimitRule: "El límite es un número entero de solicitudes por minuto, de 1 en adelante.",
    change: "Cambiar",
    changeRateLimit: "Cambiar límite de solicitudes",
    rateLimitOf: (label) => `Límite de solicitudes de ${label}`,
    rateLimitSaved: (label, limit) => `El límite de ${label} ahora es de ${limit} por minuto.`,
    state: "Estado",
    revoked: "Revocada",
    active: "Activa",
    actions: "Acciones",
    viewOnly: "Solo lectura",
    create: "Crear",
    save: "Guardar",
    rotateKey: "Rotar clave",
    revokeKey: "Revocar clave",
    rotateTestKey: "Rotar clave de prueba",
    createTestKey: "Crear clave de prueba",
    revokeTestKey: "Revocar clave de prueba",
    originCreated: "Origen creado",
    keyRotated: "Clave rotada",
    testKeyRotated: "Clave de prueba rotada",
    testKeyCreated: "Clave de prueba creada",
    keyNoun: "la clave",
    testKeyNoun: "la clave de prueba",
    newKeyLabel: "Nueva clave de API",
    newTestKeyLabel: "Nueva clave de API de prueba",
    keyFor: "La clave de API de ",
    testKeyFor: "La clave de prueba de ",
    testKeyHint:
      "Los prospectos enviados con ella son datos de prueba: se guardan aparte de los reales, nunca se asignan y solo se ven con el interruptor de Datos de prueba encendido.",
    onlyTimeBefore: (test) =>
      `Es la única vez que se muestra ${test ? "la clave de prueba" : "la clave"}. Al cerrar este cuadro solo queda visible su prefijo `,
    onlyTimeAfter: (test) => `. Si se pierde, ${test ? "rota la clave de prueba" : "rota la clave"}.`,
    rotateTitle: (label) => `¿Rotar la clave de ${label}?`,
    rotateText: (prefix) =>
      `Una clave nueva reemplaza a ${prefix}…; la clave actual deja de funcionar de inmediato. Hay que actualizar las integraciones que la usan.`,
    revokeTitle: (label) => `¿Revocar la clave de ${label}?`,
    revokeText: (prefix) =>
      `Desde ahora, las solicitudes con ${prefix}… se rechazarán como invalid_key. No se puede deshacer; rota la clave para emitir una nueva.`,
    keyRevoked: (label) => `Se revocó la clave de ${label}.`,
    rotateTestTitle: (label) => `¿Rotar la clave de prueba de ${label}?`,
    rotateTestText: (prefix) =>
      `Una clave de prueba nueva reemplaza a ${prefix}…; la actual deja de funcionar de inmediato. La clave real no cambia.`,
    revokeTestTitle: (label) => `¿Revocar la clave de prueba de ${label}?`,
    revokeTestText: (prefix) =>
      `Desde ahora, las solicitudes con ${prefix}… se rechazarán como invalid_key. La clave real y los datos de prueba ya enviados se quedan; puedes crear otra clave de prueba cuando quieras.`,
    testRevoked: (label) => `Se revocó la clave de prueba de ${label}.`
  },

  requests: {
    title: "Solicitudes",
    lede: "Cada POST /v1/leads, las más recientes primero.",
    ledeTest: "Cada POST /v1/leads hecho con una clave de prueba, las más recientes primero.",
    liveEvery: "En vivo: las solicitudes nuevas aparecen cada 3 segundos",
    liveNew: (count, at) =>
      `En vivo: ${count} ${count === 1 ? "solicitud nueva" : "solicitudes nuevas"} a las ${at}`,
    livePaused: (message) => `Actualización en vivo en pausa: ${message}`,
    testBanner:
      "Solo solicitudes de prueba: hechas con las claves de prueba de los orígenes (lk_test_…). No cuentan en ninguna cifra del resumen y se quedan aquí cuando se eliminan los datos de prueba.",
    allOrigins: "Todos los orígenes",
    revokedSuffix: (label) => `${label} (revocado)`,
    unattributedPrefixes: "Prefijos sin origen",
    unknownOrigin: "Origen desconocido",
    anyStatus: "Cualquier estado",
    status2xx: "2xx correcta",
    status4xx: "4xx error del cliente",
    status5xx: "5xx error del servidor",
    anyOutcome: "Cualquier resultado",
    filterRequests: "Filtrar solicitudes",
    origin: "Origen",
    statusClass: "Tipo de estado",
    outcome: "Resultado",
    from: "Desde",
    to: "Hasta",
    requestId: "Id de solicitud",
    idempotencyKey: "Clave de idempotencia",
    applyFilters: "Aplicar filtros",
    clear: "Limpiar",
    filters: "Filtros",
    filtersActive: (count) => `Filtros (${count} ${count === 1 ? "activo" : "activos"})`,
    caption: "Solicitudes",
    empty: "Ninguna solicitud coincide. Las solicitudes aparecen aquí en cuanto llegan.",
    emptyTest:
      "Ninguna solicitud de prueba coincide. Las hechas con una clave de prueba aparecen aquí en cuanto llegan.",
    allShown: (count, one) => `${count} ${one ? "solicitud" : "solicitudes"}, todas a la vista.`,
    received: "Recibida",
    status: "Estado",
    originAndKey: "Origen y clave",
    keyPrefix: "Prefijo de la clave",
    noKey: "sin clave",
    lead: "Prospecto",
    open: "Abrir",
    duration: "Duración",
    detailsOf: (requestId) => `Solicitud ${requestId}, detalle`,
    dialogTitle: "Solicitud",
    mode: "Modo",
    madeWithTestKey: " hecha con una clave de prueba",
    live: "Real",
    unattributed: "Sin origen",
    testShort: "PRUEBA"
  },

  catalog: catalogEs,

  webhooks: webhooksEs,

  capture: captureEs,

  rescue: rescueEs,

  leads: leadsEs,

  audit: {
    title: "Auditoría",
    lede: "Cada acción de los operadores: quién, qué, cuándo y desde dónde. Los registros se conservan.",
    caption: "Registro de auditoría",
    empty: "Todavía no hay acciones registradas.",
    when: "Cuándo",
    who: "Quién",
    action: "Acción",
    target: "Objeto",
    from: "Desde",
    erasures: "Borrados",
    loadingErasures: "Cargando borrados…",
    erasuresIntroBefore: "Prospectos cuyos datos personales se borraron, desde la consola o con ",
    erasuresIntroAfter: "; los más recientes primero.",
    noErasures: "No se ha borrado ningún prospecto.",
    lead: "Prospecto",
    by: "Por",
    reason: "Motivo"
  }
}
