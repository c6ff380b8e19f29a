/** docs/quick-start.md as README.md's Quick start makes it (see scripts/docs-quick-start.ts). */
import { siteLink } from '../../docs/.vitepress/links.ts'

const START = '<!-- #region quick-start -->'
const END = '<!-- #endregion quick-start -->'

export function quickStartPage(readme: string): string {
  const start = readme.indexOf(START)
  const end = readme.indexOf(END)
  if (start === -1 || end < start) throw new Error(`README.md has no ${START} … ${END} region`)
  const region = readme.slice(start + START.length, end).trim()
  // Inline links only: the region writes no reference-style ones.
  const body = region
    .replace(/\]\(([^)\s]+)\)/g, (_, href: string) => `](${siteLink(href)})`)
    // Its sections are the README's h3s under "## Quick start"; under this page's h1 they are h2s.
    .replace(/^#(#{2,}) /gm, '$1 ')
  return `<!-- Made from README.md's Quick start by \`pnpm docs:quick-start\`: edit README.md, not this file. -->\n\n# Quick start\n\n${body}\n`
}
