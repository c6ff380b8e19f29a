import { existsSync } from 'node:fs'

/**
 * Where Debian installs Chromium, in the order the browser tests take them: the headless shell
 * (`apt-get install chromium-headless-shell`), the same engine without the desktop browser around
 * it, which Playwright itself runs headless tests in, and which ran the inspector's browser tests
 * for three quarters of the CPU time; then the whole browser (`apt-get install chromium`).
 */
export const DEBIAN_CHROMIUMS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'] as const

/** What to install where none is found. */
export const CHROMIUM_INSTALL = 'apt-get install chromium-headless-shell, or chromium'

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH`, or the first of Debian's that is
 * installed. No browser is ever downloaded: playwright-core only drives the one installed.
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): string | undefined {
  const given = env.CHROMIUM_PATH
  if (given) return exists(given) ? given : undefined
  return DEBIAN_CHROMIUMS.find((path) => exists(path))
}

/** Why no Chromium was found, and what to do: where `CHROMIUM_PATH` is set, that it names no file. */
export function chromiumMissing(env: NodeJS.ProcessEnv = process.env): string {
  const fix = `Install it (Debian/Ubuntu: ${CHROMIUM_INSTALL}) or set CHROMIUM_PATH`
  if (env.CHROMIUM_PATH) return `no Chromium at CHROMIUM_PATH (${env.CHROMIUM_PATH}). ${fix} to one.`
  return `no Chromium at ${DEBIAN_CHROMIUMS.join(' or ')}. ${fix}.`
}

export function chromiumAvailability(...where: Parameters<typeof chromiumPath>): { path: string | undefined; message: string } {
  const path = chromiumPath(...where)
  if (path !== undefined) return { path, message: `Browser tests run in ${path}` }
  return { path, message: `Browser tests not run: ${chromiumMissing(where[0])} Then run pnpm test:browser.` }
}

/** The flags Chromium needs here: as root without a sandbox, and without dialling out for updates or sync. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
