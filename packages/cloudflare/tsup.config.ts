import { buildPackage } from '../../tsup.shared.ts'

export default buildPackage({ entry: ['src/index.ts'], tsconfig: 'tsconfig.build.json' })
