#!/usr/bin/env node
// The `hookguard` bin inside this repository. It exists before `pnpm build` writes dist/, so that
// `pnpm install` can link it into the workspace packages that depend on the emulator; it runs the
// built command. The published package's bin is dist/cli.js itself (publishConfig.bin), and this
// file is not shipped. From source, without a build: `pnpm hookguard …` at the root.
try {
  await import('../dist/cli.js')
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('cli.js')) {
    console.error('hookguard: @hookguard/emulator is not built yet; run `pnpm build` (or `pnpm hookguard …` to run it from source)')
    process.exit(1)
  }
  throw error
}
