import { buildPackage } from '../../tsup.shared.ts'

export default buildPackage({ entry: { index: 'src/index.ts', adapter: 'src/adapter.ts', node: 'src/node.ts' }, conditional: true })
