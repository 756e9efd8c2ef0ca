/** Markdown without its fenced code blocks, where a `#` line is a comment, not a heading. */
export const withoutCodeBlocks = (markdown: string): string => markdown.replaceAll(/^```[\s\S]*?^```$/gm, "")

/**
 * The anchors GitHub gives a file's headings: lower case, punctuation dropped, each space a hyphen,
 * `-1`, `-2`… on repeats (the rule of github-slugger, which GitHub's renderer uses).
 */
export const anchorsOf = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replaceAll(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replaceAll(" ", "-")
    let unique = slug
    for (let repeat = 1; anchors.has(unique); repeat++) unique = `${slug}-${repeat}`
    anchors.add(unique)
  }
  return anchors
}
