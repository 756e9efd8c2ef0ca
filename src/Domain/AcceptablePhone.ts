/**
 * The rule the contract itself states for a phone, apart from src/Domain/Phone.ts so that the
 * contract (and the installable client built from it) does not load libphonenumber-js.
 */
const NON_DIGITS = /\D/g
const MINIMUM_PHONE_DIGITS = 10
const ACCEPTABLE_PHONE_CHARACTERS = /^\+?[0-9 ().-]*$/

/** A phone a lead may carry: its characters and at least 10 digits (docs/contract.md#2-normalisation). */
export const isAcceptablePhone = (raw: string): boolean =>
  ACCEPTABLE_PHONE_CHARACTERS.test(raw) && raw.replace(NON_DIGITS, "").length >= MINIMUM_PHONE_DIGITS
