import { buildPackage } from '../../tsup.shared.ts'

// src/cli.ts builds to dist/cli.js, the `hookguard` bin.
export default buildPackage({ entry: ['src/index.ts'], bin: ['src/cli.ts'] })
