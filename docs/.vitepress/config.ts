/**
 * The documentation site: VitePress over docs/. `pnpm docs:dev` serves it, `pnpm docs:build`
 * builds it into docs/.vitepress/dist after TypeDoc has written the API reference into docs/api.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type DefaultTheme, defineConfig } from 'vitepress'
import { REPOSITORY, siteLink, slugify } from './links.ts'
import { localSearch } from './search.ts'

const apiSidebarFile = fileURLToPath(new URL('../api/typedoc-sidebar.json', import.meta.url))
/** The API reference's sidebar, as TypeDoc wrote it (none before `pnpm run docs`). */
const apiSidebar: DefaultTheme.SidebarItem[] = existsSync(apiSidebarFile) ? JSON.parse(readFileSync(apiSidebarFile, 'utf8')) : []

const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Start',
    items: [
      { text: 'Quick start', link: '/quick-start' },
      { text: 'The four modes', link: '/modes' },
      { text: 'Configuration and options', link: '/configuration' },
    ],
  },
  {
    text: 'Frameworks',
    items: [
      { text: 'Overview', link: '/frameworks/' },
      { text: 'Express', link: '/frameworks/express' },
      { text: 'Koa', link: '/frameworks/koa' },
      { text: 'Fastify', link: '/frameworks/fastify' },
      { text: 'NestJS', link: '/frameworks/nestjs' },
      { text: 'Hono', link: '/frameworks/hono' },
      { text: 'Fetch handlers', link: '/frameworks/fetch' },
    ],
  },
  {
    text: 'In production',
    items: [
      { text: 'Events, and each delivery once', link: '/events' },
      { text: 'Several instances and Redis', link: '/scaling' },
      { text: 'Answer fast, process later', link: '/handoff' },
      { text: 'Each delivery once on Workers', link: '/cloudflare' },
      { text: 'Deployment', link: '/deployment' },
      { text: 'Security', link: '/security' },
      { text: 'Errors', link: '/errors' },
      { text: 'Troubleshooting', link: '/troubleshooting' },
    ],
  },
  {
    text: 'More',
    items: [
      { text: 'Testing your receiver', link: '/testing' },
      { text: 'The inspector', link: '/inspect' },
      { text: 'The real service on your laptop', link: '/tunnel' },
      { text: 'Using the core', link: '/core' },
      { text: 'The API client', link: '/client' },
      { text: 'Runtimes', link: '/runtimes' },
      { text: 'Benchmarks', link: '/benchmarks' },
      { text: 'Reliability', link: '/reliability' },
    ],
  },
]

export default defineConfig({
  title: 'hookguard',
  description: "Receive the marketing-data service's webhooks and know they are genuine.",
  lang: 'en',
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  lastUpdated: false,
  // A dead link fails the build; scripts/docs-check-anchors.ts adds the #anchors VitePress does not check.
  ignoreDeadLinks: false,
  markdown: {
    anchor: { slugify },
    config(md) {
      md.core.ruler.push('hookguard-repository-links', (state) => {
        for (const token of state.tokens) {
          for (const child of token.children ?? []) {
            if (child.type !== 'link_open') continue
            const href = child.attrGet('href')
            if (href !== null) child.attrSet('href', siteLink(href))
          }
        }
      })
    },
  },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/quick-start' },
      { text: 'API reference', link: '/api/' },
      { text: 'Changelog', link: `${REPOSITORY}/blob/main/CHANGELOG.md` },
    ],
    sidebar: {
      '/api/': [{ text: 'API reference', link: '/api/', items: apiSidebar }],
      '/': guide,
    },
    search: localSearch(guide),
    outline: { level: [2, 3] },
    socialLinks: [{ icon: 'github', link: REPOSITORY }],
    editLink: { pattern: `${REPOSITORY}/edit/main/docs/:path`, text: 'Edit this page on GitHub' },
  },
})
