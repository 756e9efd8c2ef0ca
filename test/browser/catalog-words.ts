import type { Page } from "playwright-core"
import { en } from "../../src/Console/web/messages/en.ts"
import { es } from "../../src/Console/web/messages/es.ts"

/**
 * Which words a page may show in Spanish: every string of the Spanish catalog, and every sentence its
 * functions make (a value's place matches any text). What the English catalog says and the Spanish
 * one does not is English on a Spanish page; what neither says is a word that skipped the catalogs.
 */

const normalize = (text: string) => text.replace(/\s+/g, " ").trim()

const marker = (index: number) => `\u{E000}${index}\u{E001}`
const markers = /\u{E000}\d+\u{E001}/gu
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

interface Words {
  readonly strings: Set<string>
  readonly patterns: Array<RegExp>
}

/** Each argument a catalog function may get: a value (text), a count, a yes/no. */
const argumentKinds = ["text", 0, 1, 2, true, false] as const

const argumentLists = (arity: number): Array<Array<unknown>> => {
  let lists: Array<Array<unknown>> = [[]]
  for (let position = 0; position < arity; position++)
    lists = lists.flatMap((list) =>
      argumentKinds.map((kind) => [...list, kind === "text" ? marker(position) : kind])
    )
  return lists
}

const collect = (value: unknown, words: Words) => {
  if (typeof value === "string") words.strings.add(normalize(value))
  else if (typeof value === "function") {
    for (const args of argumentLists(value.length)) {
      let made: unknown
      try {
        made = value(...args)
      } catch {
        continue
      }
      if (typeof made !== "string") continue
      const pattern = escapeRegex(normalize(made))
        .replace(markers, "(.+?)")
        // a count given as a number shows as digits
        .replace(/(?<![\d.,])[012](?![\d.,])/g, "[\\d.,]+")
      words.patterns.push(new RegExp(`^${pattern}$`, "u"))
    }
  } else if (Array.isArray(value)) for (const item of value) collect(item, words)
  else if (typeof value === "object" && value !== null)
    for (const item of Object.values(value)) collect(item, words)
}

const wordsOf = (catalog: unknown): Words => {
  const words: Words = { strings: new Set(), patterns: [] }
  collect(catalog, words)
  return words
}

const spanish = wordsOf(es)
const english = wordsOf(en)

const says = (words: Words, text: string) =>
  words.strings.has(text) || words.patterns.some((pattern) => pattern.test(text))

const months = "(ene|feb|mar|abr|may|jun|jul|ago|sept?|oct|nov|dic)\\.?"

/** Values the platform formats or the data holds: dates, times, numbers, zones, ids, addresses, e-mails. */
const values = [
  new RegExp(`^[\\d\\s:.,/–-]*(de )?${months}?( de)?[\\d\\s:.,/–-]*$`, "iu"),
  /^hace \d+ (s|seg\.?|min\.?|h|d[ií]as?)$/u,
  /^(GMT|UTC)([+−-]\d{1,2}(:\d{2})?)?$/u,
  /^[\d.,]+\s?ms$/u,
  /^https?:\/\/\S+$/u,
  /^[^\s@]+@[^\s@]+$/u,
  /^cli:\S+$/u,
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u,
  /^lk_(live|test)_\S*…?$/u,
  /^[A-Z]{3}-\d{4}$/u
]

export interface StrayWord {
  readonly text: string
  readonly why: "English" | "in neither catalog"
}

/**
 * Every visible text of the page (text nodes and placeholders), but code (`<code>`, `<pre>`,
 * monospaced values), another language's own name, and what is hidden or only for screen readers.
 */
const visibleTexts = (page: Page): Promise<Array<string>> =>
  page.evaluate(`(() => {
    const exempt = "code, pre, kbd, samp, .mono, script, style, [lang]:not(html), select[name=time_zone]"
    const hidden = (element) =>
      element.closest(".visually-hidden, [hidden], [aria-hidden=true]:not(svg), dialog:not([open])") !== null ||
      !element.checkVisibility({ visibilityProperty: true, opacityProperty: true })
    const texts = []
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement
      if (parent === null || parent.closest(exempt) !== null || hidden(parent)) continue
      texts.push(node.textContent ?? "")
    }
    for (const input of document.querySelectorAll("[placeholder]"))
      if (!hidden(input)) texts.push(input.placeholder)
    return texts
  })()`) as Promise<Array<string>>

/** The page's visible words that are English, or in neither catalog (values `known` names are exempt). */
export const strayWords = async (
  page: Page,
  known: ReadonlyArray<string | RegExp>
): Promise<Array<StrayWord>> => {
  const knownValues = new Set(known.filter((value) => typeof value === "string").map(normalize))
  const knownPatterns = known.filter((value) => typeof value !== "string")
  const strays = new Map<string, StrayWord>()
  for (const raw of await visibleTexts(page)) {
    const text = normalize(raw)
    if (!/\p{L}/u.test(text) || knownValues.has(text) || says(spanish, text)) continue
    if ([...values, ...knownPatterns].some((pattern) => pattern.test(text))) continue
    strays.set(text, { text, why: says(english, text) ? "English" : "in neither catalog" })
  }
  return [...strays.values()]
}
