/** The repository: where the site links for files outside docs/, and its "edit this page" links. */
export const REPOSITORY = 'https://github.com/hookguard/hookguard'

/**
 * Heading ids as GitHub writes them (lower case; punctuation other than `-` and `_` dropped; each
 * space a `-`), so that one `page.md#anchor` link works on GitHub, on npm and on this site.
 */
export function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/**
 * A link written for the repository, in the README region the Quick start page is made of: `docs/x.md`
 * is the docs' own `x.md`; a file elsewhere in the repository is its page on GitHub. The links of
 * docs/quick-start.md are made so (scripts/docs-quick-start.ts), and the site applies it to every
 * page as a safety net.
 */
export function siteLink(href: string): string {
  if (/^[a-z][a-z\d+.-]*:|^[#/]/i.test(href)) return href
  if (href.startsWith('docs/')) return href.slice('docs/'.length)
  if (/^(packages|examples|scripts|test|bench|runtimes|testkit|load)\/|^(CHANGELOG|CONTRIBUTING)\.md|^LICENSE$/.test(href)) {
    return `${REPOSITORY}/blob/main/${href}`
  }
  return href
}
