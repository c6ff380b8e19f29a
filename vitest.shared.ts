import { defaultClientConditions, defaultServerConditions } from 'vite'
import type { ViteUserConfig } from 'vitest/config'

/** Inside the repository every package resolves the others' TypeScript sources, not `dist`. */
export const SOURCE_CONDITION = '@hookguard/source'

export const sourceResolution = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
} satisfies ViteUserConfig

/**
 * The same sources as a Worker would pick them, so the core's `#crypto` resolves to Web Crypto.
 * Vitest still appends `node` on its server side, so the core's `imports` map lists the Web
 * conditions before `node`.
 */
export const webResolution = {
  resolve: { conditions: [SOURCE_CONDITION, 'module', 'worker', 'browser'] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, 'module', 'worker', 'browser'] } },
} satisfies ViteUserConfig
