import { defaultClientConditions, defaultServerConditions } from 'vite'
import type { ViteUserConfig } from 'vitest/config'

/** Inside the repository every package resolves the others' TypeScript sources, not `dist`. */
export const SOURCE_CONDITION = '@hookguard/source'

export const sourceResolution = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
} satisfies ViteUserConfig
