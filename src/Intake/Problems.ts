import type { SchemaAST, SchemaIssue } from "effect"
import { fieldAt, rankOf } from "../Api/LeadRequest.ts"

const describe = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "String":
      return "a string"
    case "Number":
      return "a number"
    case "Boolean":
      return "a boolean"
    case "Null":
      return "null"
    case "Objects":
      return "an object"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union":
      return ast.types.map(describe).join(" or ")
    default:
      return "of another type"
  }
}

/** A failing field of the request and what it had to be (docs/contract.md#3-order-of-checks 6-7). */
interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const annotatedMessage = (annotations: { readonly message?: unknown } | undefined) =>
  typeof annotations?.message === "string" ? annotations.message : undefined

/**
 * Every leaf of a decoding issue with its path. Messages name what was expected, never the value
 * sent (it may be long, or personal data); a rule's own message wins over its leaves'.
 */
export const problemsOf = (
  issue: SchemaIssue.Issue,
  path: ReadonlyArray<PropertyKey>,
  message?: string
): Array<Problem> => {
  switch (issue._tag) {
    case "Filter":
      return problemsOf(issue.issue, path, message ?? annotatedMessage(issue.filter.annotations))
    case "Encoding":
      return problemsOf(issue.issue, path, message)
    case "Pointer":
      return problemsOf(issue.issue, [...path, ...issue.path], message)
    case "Composite":
    case "AnyOf":
      if (issue.issues.length > 0) return issue.issues.flatMap((inner) => problemsOf(inner, path, message))
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "MissingKey":
      return [{ path, message: message ?? "is required" }]
    case "UnexpectedKey":
      return [{ path, message: message ?? "is not a field of this object" }]
    case "InvalidType":
      return [
        {
          path,
          message: message ?? annotatedMessage(issue.ast.annotations) ?? `must be ${describe(issue.ast)}`
        }
      ]
    case "InvalidValue":
      return [{ path, message: message ?? annotatedMessage(issue.annotations) ?? "is not valid" }]
    default:
      return [{ path, message: message ?? "is not valid" }]
  }
}

/** Contract order 7: the body's first failing field in the contract's order (the body itself first). */
export const bodyProblem = (issue: SchemaIssue.Issue) => {
  let first: Problem | undefined
  for (const problem of problemsOf(issue, [])) {
    if (first === undefined || rankOf(problem.path) < rankOf(first.path)) first = problem
  }
  if (first !== undefined && first.path.length > 0) {
    const field = fieldAt(first.path)
    return { field, message: `${field} ${first.message}` }
  }
  return {
    field: "body",
    message: issue._tag === "InvalidValue" ? "The body is not valid JSON" : "The body must be a JSON object"
  }
}
