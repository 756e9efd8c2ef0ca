import type { Messages } from "./en.ts"

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
    signOut: "Cerrar sesión",
    signOutEverywhere: "Cerrar sesión en todos los dispositivos",
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
