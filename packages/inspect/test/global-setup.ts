import { buildPage } from '../scripts/build-page.ts'

export default async function setup(): Promise<void> {
  await buildPage()
}
