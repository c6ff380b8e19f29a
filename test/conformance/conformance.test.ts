import { afterAll, beforeEach, describe, it } from 'vitest'
import { factories, fastifyInject } from '../support/apps.ts'
import { fromNow, sharedApps } from '../support/shared-apps.ts'
import { clock, groups, START } from './cases.ts'
import { runRow } from './check.ts'

// One table of cases, run against an app built with each adapter and framework version: every
// adapter must answer the contract's tables identically.

beforeEach(() => {
  clock.now = START
})

describe.each([...factories, fastifyInject])('$name', (factory) => {
  const apps = sharedApps((f, options) => f.start(options), fromNow)
  afterAll(() => apps.closeAll())
  for (const group of groups) {
    describe(group.name, () => {
      for (const row of group.cases) {
        it(row.name, async () => {
          await runRow(row, factory, apps.take)
        })
      }
    })
  }
})
