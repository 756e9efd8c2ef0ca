/** What the router gives a page: its path's parameters, a signal aborted when it is left, navigation. */
export interface PageContext {
  readonly params: ReadonlyArray<string>
  readonly signal: AbortSignal
  readonly navigate: (path: string, options?: { readonly replace?: boolean }) => void
  readonly search: URLSearchParams
}

/** A page draws itself into `main`; it may return a function that stops what it started. */
export type Page = (main: HTMLElement, context: PageContext) => unknown
