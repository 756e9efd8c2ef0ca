/** Rejected leads kept for rescue (docs/contract.md#11-rejected-leads-are-kept-for-rescue): the requests page and the overview. */
export const rescueEn = {
  keptFilter: "Kept for rescue only",
  keptBadge: "Kept for rescue",
  rescuedBadge: "Rescued",
  section: "Rescue",
  keptBody: "Body as received",
  notKept: "No body is kept for this request.",
  rescuedAs: "Rescued as lead",
  adminsOnly: "Only admins see the body kept for rescue.",
  correctedBody: "Corrected body (JSON)",
  hint: "Fix what the answer named, then rescue: the lead is created or enriched as POST /v1/leads would, for this request's origin and mode, once.",
  rescue: "Rescue lead",
  rescuing: "Rescuing…",
  invalid: (message: string) => `Still not valid: ${message}`,
  created: "Lead created from the corrected body.",
  enriched: "Existing lead enriched from the corrected body.",
  openLead: "Open lead",
  waiting: "Waiting for rescue",
  waitingHidden: "kept for rescue"
}

export const rescueEs: typeof rescueEn = {
  keptFilter: "Solo las guardadas para rescate",
  keptBadge: "Guardada para rescate",
  rescuedBadge: "Rescatada",
  section: "Rescate",
  keptBody: "Cuerpo tal como llegó",
  notKept: "No se guardó el cuerpo de esta solicitud.",
  rescuedAs: "Rescatada como prospecto",
  adminsOnly: "Solo los administradores ven el cuerpo guardado para rescate.",
  correctedBody: "Cuerpo corregido (JSON)",
  hint: "Corrige lo que indicó la respuesta y rescata: el prospecto se crea o se enriquece como lo haría POST /v1/leads, con el origen y el modo de esta solicitud, una sola vez.",
  rescue: "Rescatar prospecto",
  rescuing: "Rescatando…",
  invalid: (message: string) => `Aún no es válido: ${message}`,
  created: "Listo: se creó el prospecto con los datos corregidos.",
  enriched: "Listo: el prospecto ya existía y se completó con los datos corregidos.",
  openLead: "Abrir prospecto",
  waiting: "En espera de rescate",
  waitingHidden: "guardadas para rescate"
}
