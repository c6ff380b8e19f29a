import { CHROMIUM_INSTALL, chromiumAvailability, chromiumPath, DEBIAN_CHROMIUMS } from '@hookguard/testkit/chromium'
import { describe, expect, it } from 'vitest'

// Which Chromium the browser tests and the docs' browser test drive: the one a contributor names,
// else Debian's headless shell (the cheaper of the two), else Debian's whole browser.

const [SHELL, BROWSER] = DEBIAN_CHROMIUMS
const installed =
  (...paths: string[]) =>
  (path: string) =>
    paths.includes(path)

describe('chromiumPath', () => {
  it("takes CHROMIUM_PATH over Debian's, and gives none where it names no file", () => {
    expect(chromiumPath({ CHROMIUM_PATH: '/opt/chrome/chrome' }, installed('/opt/chrome/chrome', SHELL, BROWSER))).toBe(
      '/opt/chrome/chrome',
    )
    expect(chromiumPath({ CHROMIUM_PATH: '/opt/missing' }, installed(SHELL, BROWSER))).toBeUndefined()
  })

  it("takes Debian's headless shell where both are installed, and the whole browser where it is alone", () => {
    expect(chromiumPath({}, installed(BROWSER, SHELL))).toBe('/usr/bin/chromium-headless-shell')
    expect(chromiumPath({}, installed(BROWSER))).toBe('/usr/bin/chromium')
    expect(chromiumPath({ CHROMIUM_PATH: '' }, installed(SHELL))).toBe('/usr/bin/chromium-headless-shell')
  })

  it('finds none where neither is installed, and says what to install and how to run the browser tests then', () => {
    expect(chromiumPath({}, installed())).toBeUndefined()
    const { path, message } = chromiumAvailability({}, installed())
    expect(path).toBeUndefined()
    expect(message).toContain(`Install it (Debian/Ubuntu: ${CHROMIUM_INSTALL})`)
    expect(CHROMIUM_INSTALL).toContain('apt-get install chromium-headless-shell')
    expect(message).toContain('pnpm test:browser')
  })

  it('says so where CHROMIUM_PATH names no file, naming it', () => {
    const { message } = chromiumAvailability({ CHROMIUM_PATH: '/opt/missing/chrome' }, installed(SHELL, BROWSER))
    expect(message).toContain('no Chromium at CHROMIUM_PATH (/opt/missing/chrome)')
    expect(message).toContain('pnpm test:browser')
  })

  it('names the one the suite runs in', () => {
    expect(chromiumAvailability({}, installed(BROWSER, SHELL))).toEqual({
      path: SHELL,
      message: 'Browser tests run in /usr/bin/chromium-headless-shell',
    })
  })
})
