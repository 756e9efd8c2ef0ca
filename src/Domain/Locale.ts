import { DateTime } from "effect"

/** docs/contract.md#12-the-console-speaks-its-operators-language */
export type ConsoleLanguage = "es" | "en"

const languageOf = (tag: string): ConsoleLanguage | undefined => {
  const primary = tag.trim().toLowerCase().split("-")[0]
  return primary === "es" || primary === "en" ? primary : undefined
}

/** The first `es*` or `en*` the browser prefers (by weight, then order); `q=0` means "not this one". */
export const acceptedLanguage = (header: string | undefined): ConsoleLanguage | undefined => {
  if (header === undefined) return undefined
  const ranked = header
    .split(",")
    .map((part, index) => {
      const [tag = "", ...parameters] = part.split(";")
      const q = parameters.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined)
      return { language: languageOf(tag), weight: q === undefined ? 1 : Number(q), index }
    })
    .filter((entry) => entry.language !== undefined && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
  return ranked[0]?.language
}

const countryLanguages: Readonly<Record<string, ConsoleLanguage>> = { MX: "es" }

/** The operator's own choice, else the browser's, else the organization's country's, else English. */
export const consoleLanguage = (input: {
  readonly saved: ConsoleLanguage | null
  readonly acceptLanguage: string | undefined
  readonly country: string | null
}): ConsoleLanguage =>
  input.saved ??
  acceptedLanguage(input.acceptLanguage) ??
  (input.country === null ? undefined : countryLanguages[input.country.toUpperCase()]) ??
  "en"

/** What `<html lang>` says for each language (the console's Spanish is Mexico's). */
export const htmlLang = (language: ConsoleLanguage) => (language === "es" ? "es-MX" : "en")

const countryTimeZones: Readonly<Record<string, string>> = { MX: "America/Mexico_City" }

/** The zone an organization's times are shown in until an admin sets one. */
export const defaultTimeZone = (country: string) => countryTimeZones[country.toUpperCase()] ?? "UTC"

/**
 * The zone's midnight `daysBefore` days before the day `now` falls on there: its real midnight,
 * read from the platform's zone data, so a day with a daylight-saving change is 23 or 25 hours.
 */
export const midnightInZone = (now: number, timeZone: string, daysBefore = 0): Date =>
  DateTime.makeZonedUnsafe(now, { timeZone }).pipe(
    DateTime.startOf("day"),
    DateTime.subtract({ days: daysBefore }),
    DateTime.toDateUtc
  )
