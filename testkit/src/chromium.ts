import { existsSync } from 'node:fs'

/** Where Debian installs Chromium (`apt-get install chromium`). */
const DEBIAN_CHROMIUM = '/usr/bin/chromium'

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH`, or Debian's. No browser is ever
 * downloaded: playwright-core only drives the one installed.
 */
export function chromiumPath(): string | undefined {
  const given = process.env.CHROMIUM_PATH
  if (given) return existsSync(given) ? given : undefined
  return existsSync(DEBIAN_CHROMIUM) ? DEBIAN_CHROMIUM : undefined
}

export function chromiumAvailability(): { path: string | undefined; message: string } {
  const path = chromiumPath()
  if (path !== undefined) return { path, message: `Browser tests run in ${path}` }
  return {
    path,
    message:
      'Browser tests not run: no Chromium at /usr/bin/chromium or CHROMIUM_PATH. Install it (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH, then run pnpm test:browser.',
  }
}

/** The flags Chromium needs here: as root without a sandbox, and without dialling out for updates or sync. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
