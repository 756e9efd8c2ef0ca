import { DateTime, Option } from "effect"
import { en, type Messages } from "./messages/en.ts"
import { es } from "./messages/es.ts"

/** The console's languages (docs/contract.md#12-the-console-speaks-its-operators-language). */
export const locales = ["es-MX", "en"] as const
export type Locale = (typeof locales)[number]

export const catalogs: Record<Locale, Messages> = { "es-MX": es, en }

export const defaultTimeZone = "America/Mexico_City"

/** The words of the current locale: `t.overview.title`. Reassigned by `setLocale` (a live binding). */
export let t: Messages = en
export let locale: Locale = "en"
export let timeZone: string = defaultTimeZone

const choiceKey = "lead-intake.locale"

const fromTag = (tag: string | null | undefined): Locale | undefined => {
  const lower = tag?.toLowerCase() ?? ""
  if (lower === "es" || lower.startsWith("es-")) return "es-MX"
  if (lower === "en" || lower.startsWith("en-")) return "en"
  return undefined
}

/** The first `es*` or `en*` among the browser's preferred languages. */
export const browserLocale = (languages: ReadonlyArray<string>): Locale | undefined => {
  for (const language of languages) {
    const found = fromTag(language)
    if (found !== undefined) return found
  }
  return undefined
}

const countryLocales: Record<string, Locale> = { MX: "es-MX" }

/**
 * The operator's own choice (kept with the account), else the browser's language, else the
 * organization's country, else English.
 */
export const chooseLocale = (input: {
  readonly saved?: string | null | undefined
  readonly languages: ReadonlyArray<string>
  readonly country?: string | null | undefined
}): Locale =>
  fromTag(input.saved) ??
  browserLocale(input.languages) ??
  countryLocales[input.country?.toUpperCase() ?? ""] ??
  "en"

/** The language the operator chose with the switcher in this browser (until the account keeps it). */
export const chosenLocale = (): Locale | undefined => {
  try {
    return fromTag(localStorage.getItem(choiceKey))
  } catch {
    return undefined
  }
}

export const rememberChoice = (choice: Locale) => {
  try {
    localStorage.setItem(choiceKey, choice)
  } catch {}
}

/** The words and formats of `next` (no DOM here: the page's `lang` is set by app.ts's `speak`). */
export const setLocale = (next: Locale) => {
  locale = next
  t = catalogs[next]
  resetFormats()
}

const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

export const setTimeZone = (zone: string | null | undefined) => {
  timeZone = zone !== null && zone !== undefined && isTimeZone(zone) ? zone : defaultTimeZone
  resetFormats()
}

let formats: ReturnType<typeof makeFormats> | undefined

const clockParts: Intl.DateTimeFormatOptions = {
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23"
}
// The day as a number, not two digits: Spanish's short pattern with two digits and no year is
// "01-dic", with a year "01 dic 2026", so one table read two ways; with a number it is "1 dic" and
// "1 dic 2026" (and "Dec 1", "Dec 1, 2026").
const dayParts: Intl.DateTimeFormatOptions = { month: "short", day: "numeric", ...clockParts }
const dateTimeParts: Intl.DateTimeFormatOptions = { year: "numeric", ...dayParts }

const makeFormats = () => ({
  dateTime: new Intl.DateTimeFormat(locale, { timeZone, ...dateTimeParts }),
  dateTimeZoned: new Intl.DateTimeFormat(locale, { timeZone, ...dateTimeParts, timeZoneName: "short" }),
  shortDateTime: new Intl.DateTimeFormat(locale, { timeZone, ...dayParts }),
  date: new Intl.DateTimeFormat(locale, { timeZone, year: "numeric", month: "short", day: "numeric" }),
  dayMonth: new Intl.DateTimeFormat(locale, { timeZone, month: "short", day: "numeric" }),
  /** A calendar day the API sends as `YYYY-MM-DD`: shown as that day, whatever the zone. */
  calendarDay: new Intl.DateTimeFormat(locale, { timeZone: "UTC", month: "short", day: "numeric" }),
  hourMinute: new Intl.DateTimeFormat(locale, {
    timeZone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }),
  clock: new Intl.DateTimeFormat(locale, { timeZone, ...clockParts }),
  hourOfDay: new Intl.DateTimeFormat("en", { timeZone, hour: "numeric", hourCycle: "h23" }),
  /** `YYYY-MM-DD` (the en-CA order) in the organization's zone. */
  localDay: new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }),
  year: new Intl.DateTimeFormat("en", { timeZone, year: "numeric" }),
  zone: new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: "shortOffset" }),
  number: new Intl.NumberFormat(locale),
  percent: new Intl.NumberFormat(locale, {
    style: "percent",
    minimumFractionDigits: 1,
    maximumFractionDigits: 1
  }),
  milliseconds: new Intl.NumberFormat(locale, {
    style: "unit",
    unit: "millisecond",
    maximumFractionDigits: 1
  }),
  relative: new Intl.RelativeTimeFormat(locale, { numeric: "auto", style: "short" })
})

const wallClockField = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/

/**
 * A `datetime-local` value read as a wall-clock time in the organization's zone, as an ISO instant.
 * The platform's zone data decides the offset (Effect's `DateTime` over `Intl`): a time skipped
 * by a daylight-saving change reads as the later clock, a time repeated by one as its first pass.
 */
export const fromZonedLocal = (local: string) => {
  const match = wallClockField.exec(local)
  if (match === null) return ""
  const [year, month, day, hour, minute] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number
  ]
  return DateTime.makeZoned(
    { year, month, day, hour, minute },
    { timeZone, adjustForTimeZone: true, disambiguation: "compatible" }
  ).pipe(Option.match({ onNone: () => "", onSome: DateTime.formatIso }))
}

const twoDigits = (value: number) => String(value).padStart(2, "0")

/** An ISO instant as a `datetime-local` value: its wall-clock time in the organization's zone. */
export const toZonedLocal = (iso: string) =>
  DateTime.makeZoned(iso, { timeZone }).pipe(
    Option.match({
      onNone: () => "",
      onSome: (zoned) => {
        const parts = DateTime.toParts(zoned)
        return `${DateTime.formatIsoDate(zoned)}T${twoDigits(parts.hour)}:${twoDigits(parts.minute)}`
      }
    })
  )

const resetFormats = () => {
  formats = undefined
}

const f = () => (formats ??= makeFormats())

const sameYear = (date: Date) => f().year.format(date) === f().year.format(new Date())

/** The organization's time zone as a short label ("GMT-6"), shown beside listed times. */
export const zoneLabel = () => {
  const part = f()
    .zone.formatToParts(new Date())
    .find((entry) => entry.type === "timeZoneName")
  return part?.value ?? timeZone
}

/**
 * The calendar day an instant falls on in the organization's zone, as `YYYY-MM-DD`: the days the
 * overview counts leads by (between 00:00 and 06:00 UTC, Mexico City is still on the day before).
 */
export const dayInZone = (ms: number) => f().localDay.format(new Date(ms))

export const formatDateTime = (iso: string | null | undefined) =>
  iso ? f().dateTime.format(new Date(iso)) : t.common.none

/** With the zone's name: for a `title`, read out of the table's context. */
export const formatDateTimeZoned = (iso: string) => f().dateTimeZoned.format(new Date(iso))

/** Within the current year the year is noise in a table. */
export const formatShort = (iso: string | null | undefined) => {
  if (!iso) return t.common.none
  const date = new Date(iso)
  return sameYear(date) ? f().shortDateTime.format(date) : f().dateTime.format(date)
}

export const formatDate = (iso: string | null | undefined) => {
  if (!iso) return t.common.none
  const date = new Date(iso)
  return sameYear(date) ? f().dayMonth.format(date) : f().date.format(date)
}

export const formatCalendarDay = (date: Date) => f().calendarDay.format(date)
export const formatHourMinute = (date: Date) => f().hourMinute.format(date)
/** The hour of the day (0-23) in the organization's time zone. */
export const hourInZone = (date: Date) => Number(f().hourOfDay.format(date)) % 24

export const formatRelative = (iso: string | null | undefined, now = Date.now()) => {
  if (!iso) return t.common.never
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000)
  if (seconds < 45) return t.common.justNow
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return f().relative.format(-minutes, "minute")
  const hours = Math.round(minutes / 60)
  if (hours < 36) return f().relative.format(-hours, "hour")
  return formatDate(iso)
}

/** A clock time (the live status's "at 14:05:09"). */
export const formatClock = (date: Date) => f().clock.format(date)

export const formatNumber = (value: number | null | undefined) => f().number.format(value ?? 0)
export const formatPercent = (ratio: number) => f().percent.format(ratio)
export const formatMilliseconds = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? t.common.none : f().milliseconds.format(ms < 10 ? ms : Math.round(ms))
