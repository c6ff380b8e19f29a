/**
 * Writes docs/quick-start.md from the README's Quick start (the region between
 * `<!-- #region quick-start -->` and `<!-- #endregion quick-start -->`), its links made to work
 * from docs/ (`docs/x.md` is `x.md` there). A copy rather than VitePress's include: an include is
 * an empty page on GitHub and npm, where the other pages' links into it would lead nowhere.
 *
 * `pnpm docs:quick-start` writes the file; `pnpm docs:quick-start --check` exits 1 if it is not
 * up to date.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './lib/packages.ts'
import { quickStartPage } from './lib/quick-start.ts'

const SOURCE = join(ROOT, 'README.md')
const TARGET = join(ROOT, 'docs', 'quick-start.md')
const page = quickStartPage(readFileSync(SOURCE, 'utf8'))
if (process.argv.includes('--check')) {
  if (readFileSync(TARGET, 'utf8') !== page) {
    console.error('docs/quick-start.md is not what README.md makes: run `pnpm docs:quick-start` and commit it.')
    process.exit(1)
  }
  console.log('docs/quick-start.md is up to date')
} else {
  writeFileSync(TARGET, page)
  console.log('wrote docs/quick-start.md')
}
