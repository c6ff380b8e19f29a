import { sign } from '@hookguard/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { InspectedRecord } from '../src/record.ts'
import { jsonLine } from '../src/view.ts'
import { cleanup, inspector, nodeApp, SECRET, send } from './helpers.ts'

/**
 * The steps that make a record's notes (the diagnosis, the disagreement) are made to throw, as
 * the next hostile body may make them: the request is still answered, recorded with its verdict,
 * and its row says which note failed.
 */

const failing = vi.hoisted(() => ({ diagnosis: false, disagreement: false, verdict: false }))

vi.mock('../src/judge.ts', async (original) => {
  const real = await original<typeof import('../src/judge.ts')>()
  return {
    ...real,
    createJudge: (...args: Parameters<typeof real.createJudge>) => {
      const judge = real.createJudge(...args)
      return {
        ...judge,
        delivery: (request: Parameters<typeof judge.delivery>[0]) => {
          if (failing.verdict) throw new RangeError('Maximum call stack size exceeded')
          return judge.delivery(request)
        },
      }
    },
  }
})

vi.mock('../src/diagnose.ts', async (original) => {
  const real = await original<typeof import('../src/diagnose.ts')>()
  const fail = <T extends (...args: never[]) => unknown>(step: T) =>
    ((...args: Parameters<T>) => {
      if (failing.diagnosis) throw new RangeError('Maximum call stack size exceeded')
      return step(...args)
    }) as T
  return { ...real, diagnose: fail(real.diagnose), identifySecret: fail(real.identifySecret) }
})

vi.mock('../src/disagreement.ts', async (original) => {
  const real = await original<typeof import('../src/disagreement.ts')>()
  return {
    ...real,
    disagree: (...args: Parameters<typeof real.disagree>) => {
      if (failing.disagreement) throw new RangeError('Maximum call stack size exceeded')
      return real.disagree(...args)
    },
  }
})

afterEach(async () => {
  failing.diagnosis = false
  failing.disagreement = false
  failing.verdict = false
  await cleanup()
})

const BODY = '{"event":"order.paid"}'

describe('a record whose diagnosis throws', () => {
  for (const signed of [true, false]) {
    it(`is answered and recorded with its verdict, its diagnosis marked failed (${signed ? 'verified' : 'refused'})`, async () => {
      failing.diagnosis = true
      const { inspector: running, waitFor } = await inspector({ auth: { mode: 'secret', secret: [SECRET, 'an-older-secret'] } })
      const signature = signed ? await sign(BODY, SECRET) : 'ab'.repeat(32)
      const answer = await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': signature }, chunks: [BODY] })
      expect(answer.status).toBe(signed ? 200 : 401)
      const [record] = (await waitFor(1)) as [InspectedRecord]
      expect(record).toMatchObject({ verdict: signed ? 'verified' : 'refused', status: signed ? 200 : 401 })
      expect(record.diagnosis?.outcome).toBe('failed')
      expect(jsonLine(record)).toMatchObject({ diagnosis: 'failed', verdict: signed ? 'verified' : 'refused' })
      // The summary says it failed, never the error's text (it may quote the body).
      expect(JSON.stringify(record.diagnosis)).not.toMatch(/call stack/)
    })
  }

  it('in front of an app that verifies nothing, still flags the app', async () => {
    failing.diagnosis = true
    const app = await nodeApp((req, res) => {
      req.resume()
      req.on('end', () => res.end('{"ok":true}'))
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    const answer = await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': 'ab'.repeat(32) }, chunks: [BODY] })
    expect(answer.status).toBe(200)
    const [record] = await waitFor(1)
    expect(record).toMatchObject({ verdict: 'refused', code: 'invalid_signature', disagreement: 'app_accepted' })
    expect(record?.diagnosis?.outcome).toBe('failed')
  })
})

describe('a record whose disagreement throws', () => {
  it('is recorded with its verdict and the app’s answer, and says a note failed', async () => {
    failing.disagreement = true
    const app = await nodeApp((req, res) => {
      req.resume()
      req.on('end', () => res.end('{"ok":true}'))
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    expect(
      (await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': 'ab'.repeat(32) }, chunks: [BODY] })).status,
    ).toBe(200)
    const [record] = (await waitFor(1)) as [InspectedRecord]
    expect(record).toMatchObject({ verdict: 'refused', status: 401, annotationFailed: true })
    expect(jsonLine(record)).toMatchObject({ verdict: 'refused', annotationFailed: true })
  })
})

describe('a request that cannot be judged at all', () => {
  it('as the receiver, is answered 500 inspector_error and recorded so', async () => {
    failing.verdict = true
    const { inspector: running, waitFor } = await inspector()
    const answer = await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': 'ab'.repeat(32) }, chunks: [BODY] })
    expect(answer.status).toBe(500)
    expect(JSON.parse(answer.body.toString())).toMatchObject({ error: 'inspector_error' })
    const [record] = (await waitFor(1)) as [InspectedRecord]
    expect(record).toMatchObject({ verdict: 'refused', status: 500, code: 'inspector_error' })
  })

  it('in front of an app, passes the app’s answer on and records it, with no disagreement claimed', async () => {
    failing.verdict = true
    const app = await nodeApp((req, res) => {
      req.resume()
      req.on('end', () => res.end('{"ok":true}'))
    })
    const { inspector: running, waitFor } = await inspector({ forwardTo: app.url })
    expect((await send(`${running.receiveUrl}/hooks`, { chunks: [BODY] })).status).toBe(200)
    const [record] = (await waitFor(1)) as [InspectedRecord]
    expect(record).toMatchObject({ code: 'inspector_error', app: { status: 200 } })
    expect(record.disagreement).toBeUndefined()
  })
})

describe('a listener that throws', () => {
  it('takes the record from neither the ring nor the next one', async () => {
    const warnings: string[] = []
    let calls = 0
    const { inspector: running } = await inspector({
      onWarning: (message) => warnings.push(message),
      onRecord: () => {
        calls++
        throw new Error('listener failed')
      },
    })
    for (let i = 0; i < 2; i++) {
      expect(
        (await send(`${running.receiveUrl}/hooks`, { headers: { 'x-service-hmac-signature': await sign(BODY, SECRET) }, chunks: [BODY] }))
          .status,
      ).toBe(200)
    }
    const deadline = Date.now() + 5_000
    while (calls < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    expect(running.records()).toHaveLength(2)
    expect(warnings.join('\n')).toMatch(/record #1: reporting it failed/)
    expect(warnings.join('\n')).not.toContain(BODY)
  })
})
