import { buildPackage } from '../../tsup.shared.ts'

// The page (src/page/) is bundled first by scripts/build-page.ts into src/page/bundle.generated.ts,
// which this build inlines as strings.
export default buildPackage({ entry: ['src/index.ts', 'src/cli.ts'] })
