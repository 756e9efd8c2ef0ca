// The "min" metadata is enough: a match key only needs the parse to E.164 (country calling code plus national
// number), which min supports; "max" adds number-type and strict-validity patterns that a key does not use.
import { isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js/min"

export { isAcceptablePhone } from "./AcceptablePhone.ts"

const NON_DIGITS = /\D/g

const MEXICO_E164_PREFIX = "+52"
const MEXICO_NATIONAL_NUMBER_LENGTH = 10
// Mexico retired these dialling prefixes in 2019, yet leads still arrive written with them and libphonenumber-js
// keeps them as part of the national number; folding them lets the old and new spellings of one number match.
const RETIRED_MEXICAN_PREFIXES = [
  "1", // mobile marker dialled after the country code: +52 1 55 1234 5678
  "044", // local call to a mobile
  "045", // long-distance call to a mobile
  "01" // long-distance call to a landline
] as const

const digitsOf = (raw: string): string => raw.replace(NON_DIGITS, "")

const foldRetiredMexicanPrefix = (e164: string): string => {
  if (!e164.startsWith(MEXICO_E164_PREFIX)) return e164
  const nationalDigits = e164.slice(MEXICO_E164_PREFIX.length)
  for (const prefix of RETIRED_MEXICAN_PREFIXES) {
    if (
      nationalDigits.length === prefix.length + MEXICO_NATIONAL_NUMBER_LENGTH &&
      nationalDigits.startsWith(prefix)
    ) {
      return MEXICO_E164_PREFIX + nationalDigits.slice(prefix.length)
    }
  }
  return e164
}

export const phoneMatchKey = (raw: string, defaultCountry: string): string => {
  const country = defaultCountry.toUpperCase()
  const parsed = isSupportedCountry(country)
    ? parsePhoneNumberFromString(raw, country)
    : parsePhoneNumberFromString(raw)
  return parsed === undefined ? digitsOf(raw) : foldRetiredMexicanPrefix(parsed.number)
}

export const phoneTail = (raw: string): string => digitsOf(raw).slice(-4)
