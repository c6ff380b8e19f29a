import { describe, it } from 'vitest'
import { factories, fastifyInject } from '../support/apps.ts'
import { contentLength } from './cases.ts'
import { runRow } from './check.ts'

// The Content-Length rows that only an app served in process can receive: on a socket, Node's own
// parser answers them first (connections.test.ts pins that answer for every adapter).

const inProcess = [...factories.filter((factory) => factory.inProcess === true), fastifyInject]

describe.each(inProcess)('$name', (factory) => {
  describe(contentLength.name, () => {
    it.each(contentLength.cases.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
      await runRow(row, factory)
    })
  })
})
