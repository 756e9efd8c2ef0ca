import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript5"
import { describe, expect, it } from "vitest"
import { en } from "../../src/Console/web/messages/en.ts"
import { es } from "../../src/Console/web/messages/es.ts"

/**
 * Every word of the console comes from its two catalogs: the same keys in both (the type check says
 * so too), and no user-visible string literal in the browser code outside them.
 */

const webRoot = path.resolve(import.meta.dirname, "../../src/Console/web")

/** Pages not yet converted from JavaScript: this list only shrinks, and is empty when the work is done. */
const stillJavaScript: Array<string> = []

const shapeOf = (value: unknown, prefix = ""): Array<string> => {
  if (typeof value === "function") return [`${prefix} (function/${value.length})`]
  if (typeof value === "string") return [`${prefix} (text)`]
  if (typeof value === "object" && value !== null)
    return Object.entries(value).flatMap(([key, inner]) => shapeOf(inner, prefix ? `${prefix}.${key}` : key))
  return [`${prefix} (${typeof value})`]
}

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]
  )

/** Calls whose arguments are shown to the operator: from the first index given, up to the second. */
const visibleArguments: Record<string, readonly [number, number?]> = {
  h: [2],
  svg: [2],
  add: [1],
  replace: [1],
  link: [2],
  toast: [0, 1],
  loading: [0],
  pageHeader: [0],
  section: [0],
  field: [0],
  testBadge: [0],
  testDataBanner: [0],
  stat: [0, 2]
}

/** Object properties and element properties whose text is shown or read out. */
const visibleProperties = new Set([
  "title",
  "aria-label",
  "aria-description",
  "aria-roledescription",
  "aria-valuetext",
  "ariaLabel",
  "placeholder",
  "alt",
  "label",
  "message",
  "confirmLabel",
  "caption",
  "empty",
  "intro",
  "warning",
  "noun",
  "text",
  "textContent",
  "innerText",
  "innerHTML"
])

/** Text inside these elements is the API's or the CLI's own (codes, ids, commands), not words. */
const literalElements = new Set(["code", "kbd", "samp"])

const hasWords = (text: string) => /\p{L}{2,}/u.test(text)

interface Finding {
  readonly line: number
  readonly text: string
}

/** The user-visible string literals written in one browser source file. */
const visibleLiterals = (fileName: string, source: string): Array<Finding> => {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const findings: Array<Finding> = []
  const report = (node: ts.Node, text: string) => {
    if (hasWords(text))
      findings.push({ line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1, text })
  }
  /** The literals an expression shows: through arrays, conditionals, `??`/`||`, `+` and templates. */
  const shown = (node: ts.Expression): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) report(node, node.text)
    else if (ts.isTemplateExpression(node)) {
      report(node, [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(""))
      for (const span of node.templateSpans) shown(span.expression)
    } else if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) shown(node.expression)
    else if (ts.isArrayLiteralExpression(node)) for (const element of node.elements) shown(element)
    else if (ts.isConditionalExpression(node)) {
      shown(node.whenTrue)
      shown(node.whenFalse)
    } else if (ts.isBinaryExpression(node)) {
      const kind = node.operatorToken.kind
      if (kind === ts.SyntaxKind.PlusToken) {
        shown(node.left)
        shown(node.right)
      } else if (kind === ts.SyntaxKind.QuestionQuestionToken || kind === ts.SyntaxKind.BarBarToken)
        shown(node.right)
    } else if (ts.isArrowFunction(node) && !ts.isBlock(node.body)) shown(node.body)
  }
  const nameOf = (name: ts.PropertyName | ts.MemberName) =>
    ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name) ? name.text : undefined
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined
      const range =
        name !== undefined && Object.hasOwn(visibleArguments, name) ? visibleArguments[name] : undefined
      const tag = node.arguments[0]
      const literalElement =
        (name === "h" || name === "svg") &&
        tag !== undefined &&
        ts.isStringLiteral(tag) &&
        literalElements.has(tag.text)
      if (range !== undefined && !literalElement) node.arguments.slice(...range).forEach(shown)
      if (name === "setAttribute") {
        const [attribute, value] = node.arguments
        if (attribute && value && ts.isStringLiteral(attribute) && visibleProperties.has(attribute.text))
          shown(value)
      }
    } else if (ts.isPropertyAssignment(node)) {
      const name = nameOf(node.name)
      if (name !== undefined && visibleProperties.has(name)) shown(node.initializer)
    } else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      visibleProperties.has(node.left.name.text)
    ) {
      shown(node.right)
    } else if (ts.isParameter(node) && node.initializer !== undefined) {
      const name = ts.isIdentifier(node.name) ? node.name.text : undefined
      if (name !== undefined && visibleProperties.has(name)) shown(node.initializer)
    } else if (ts.isBindingElement(node) && node.initializer !== undefined) {
      const name = ts.isIdentifier(node.name) ? node.name.text : undefined
      if (name !== undefined && visibleProperties.has(name)) shown(node.initializer)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return findings
}

describe("the console's message catalogs", () => {
  it("have the same keys, each of the same kind, in Spanish and English", () => {
    expect(shapeOf(es)).toEqual(shapeOf(en))
  })

  it("have no empty entry", () => {
    const empty = (value: unknown, at: string): Array<string> =>
      typeof value === "string"
        ? value.trim() === ""
          ? [at]
          : []
        : typeof value === "object" && value !== null
          ? Object.entries(value).flatMap(([key, inner]) => empty(inner, `${at}.${key}`))
          : []
    expect([...empty(en, "en"), ...empty(es, "es")]).toEqual([])
  })

  it("finds a word written in a component (the scan can fail)", () => {
    const dollar = "$"
    const source = [
      'h("p", {}, "Hello there")',
      `h("button", { "aria-label": \`Close ${dollar}{name}\` }, "×")`,
      'element.textContent = ok ? "Copied" : t.common.copy',
      'toast("Saved.")',
      'h("code", {}, "lead-intake lead erase")',
      `h("p", {}, t.overview.title, \`: ${dollar}{code}\`)`
    ].join("\n")
    expect(visibleLiterals("fixture.ts", source)).toEqual([
      { line: 1, text: "Hello there" },
      { line: 2, text: "Close " },
      { line: 3, text: "Copied" },
      { line: 4, text: "Saved." }
    ])
  })

  it("hold every user-visible word of the browser code", () => {
    const sources = filesUnder(webRoot).filter(
      (file) => file.endsWith(".ts") && !file.startsWith(path.join(webRoot, "messages"))
    )
    expect(sources.length).toBeGreaterThan(5)
    const findings = sources.flatMap((file) =>
      visibleLiterals(file, readFileSync(file, "utf8")).map(
        ({ line, text }) => `${path.relative(webRoot, file)}:${line} ${JSON.stringify(text)}`
      )
    )
    expect(findings).toEqual([])
  })

  it("leave no hand-written JavaScript in the console but the pages still to convert", () => {
    const javaScript = filesUnder(webRoot)
      .filter((file) => file.endsWith(".js"))
      .map((file) => path.basename(file))
    expect(javaScript.filter((name) => !stillJavaScript.includes(name))).toEqual([])
  })
})
