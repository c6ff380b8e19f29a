import { sign } from '@hookguard/core'
import { hostileShape } from '@hookguard/testkit/hostile'
import { afterEach, describe, expect, it } from 'vitest'
import { diagnose, MAX_DIAGNOSED_SECRETS } from '../src/diagnose.ts'
import { createDiagnosisBudget } from '../src/diagnosis-budget.ts'
import { createJudge } from '../src/judge.ts'
import { checkOptions } from '../src/options.ts'
import { detail } from '../src/view.ts'
import { cleanup, inspector, SECRET, send } from './helpers.ts'

afterEach(cleanup)

/** A clock the test moves, and a diagnosis that takes `ms` of it. */
function clocked() {
  let now = 0
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms
    },
    taking: (ms: number) => async () => {
      now += ms
      return 'diagnosed'
    },
  }
}

describe('the time diagnoses may take', () => {
  it('runs diagnoses until their time reaches the burst, then none until the clock refills it', async () => {
    const clock = clocked()
    const budget = createDiagnosisBudget({ share: 0.25, burstMs: 100, now: clock.now })
    const ran: (string | undefined)[] = []
    for (let i = 0; i < 4; i++) ran.push(await budget.run(clock.taking(50)))
    // Three diagnoses of 50 ms overdraw an allowance of 100 (a quarter of each millisecond
    // refilling it meanwhile): the fourth finds it spent, 12.5 ms short.
    expect(ran).toEqual(['diagnosed', 'diagnosed', 'diagnosed', undefined])
    clock.advance(40)
    expect(await budget.run(clock.taking(1))).toBeUndefined()
    clock.advance(20)
    expect(await budget.run(clock.taking(1))).toBe('diagnosed')
  })

  it('refills no further than the burst after a quiet while', async () => {
    const clock = clocked()
    const budget = createDiagnosisBudget({ share: 0.1, burstMs: 50, now: clock.now })
    clock.advance(60_000)
    expect(await budget.run(clock.taking(60))).toBe('diagnosed')
    expect(await budget.run(clock.taking(1))).toBeUndefined()
  })

  it('tells a diagnosis under way when the allowance is spent, counting the time of those running beside it', async () => {
    const clock = clocked()
    const budget = createDiagnosisBudget({ share: 0, burstMs: 100, now: clock.now })
    const seen = await budget.run(async (spent) => {
      const looks = [spent()]
      for (let i = 0; i < 2; i++) {
        clock.advance(60)
        looks.push(spent())
      }
      return looks
    })
    expect(seen).toEqual([false, false, true])
    const fresh = createDiagnosisBudget({ share: 0, burstMs: 100, now: clock.now })
    // Two at once, each turn 30 ms of the clock: each counts its wall time, the other's turns in it
    // included (which errs toward less), so both find the allowance spent at their second turn.
    const turns = async (spent: () => boolean) => {
      const seen: boolean[] = []
      for (let turn = 0; turn < 2; turn++) {
        clock.advance(30)
        seen.push(spent())
        await new Promise((resolve) => setImmediate(resolve))
      }
      return seen
    }
    const [first, second] = await Promise.all([fresh.run(turns), fresh.run(turns)])
    expect([first, second]).toEqual([
      [false, true],
      [false, true],
    ])
  })

  it('counts a diagnosis that throws', async () => {
    const clock = clocked()
    const budget = createDiagnosisBudget({ share: 0.1, burstMs: 10, now: clock.now })
    await expect(
      budget.run(async () => {
        clock.advance(20)
        throw new Error('hostile body')
      }),
    ).rejects.toThrow('hostile body')
    expect(await budget.run(clock.taking(1))).toBeUndefined()
  })
})

describe('a judge whose diagnosis time is spent', () => {
  const settings = checkOptions({ auth: { mode: 'secret', secret: SECRET } })
  const spent = { run: async () => undefined }
  const post = (headers: string[], body: string) => ({
    method: 'POST',
    url: '/hooks',
    rawHeaders: ['Content-Type', 'application/json', ...headers],
    body: new TextEncoder().encode(body),
    truncated: false,
  })

  it('still refuses a forged delivery as it would, its diagnosis skipped', async () => {
    const judge = createJudge(settings, true, spent)
    const judgement = await judge.delivery(post(['X-Service-Hmac-Signature', 'ab'.repeat(32)], '{"event":"forged"}'))
    expect(judgement).toMatchObject({ verdict: 'refused', code: 'invalid_signature', response: { status: 401 } })
    expect(judgement.diagnosis?.outcome).toBe('skipped')
    expect(judgement.diagnosis?.summary).toMatch(/^Not diagnosed: .* The verdict stands\.$/)
  })

  it('still says which secret signed a verified delivery: that is not the sender’s choice of work', async () => {
    const { sign } = await import('@hookguard/core')
    const body = '{"event":"genuine"}'
    const judge = createJudge(settings, true, spent)
    const judgement = await judge.delivery(post(['X-Service-Hmac-Signature', await sign(body, SECRET)], body))
    expect(judgement.verdict).toBe('verified')
    expect(judgement.diagnosis?.outcome).toBe('matched')
  })
})

describe('a diagnosis with many secrets', () => {
  const secrets = Array.from({ length: MAX_DIAGNOSED_SECRETS + 8 }, (_, i) => `rotation-secret-${i}`)
  const body = new TextEncoder().encode('{"event":"order.paid","data":{"note":"5 < 6"}}')
  const triedSecrets = (tried: { secret: number }[]) => new Set(tried.map((variant) => variant.secret)).size
  const forged = (bytes: Uint8Array) => ({
    method: 'POST',
    url: '/hooks',
    rawHeaders: ['Content-Type', 'application/json', 'X-Service-Hmac-Signature', 'ab'.repeat(32)],
    body: bytes,
    truncated: false,
  })

  it('stops part-way once its time is spent, saying how far it went', async () => {
    let checks = 0
    const result = await diagnose({ body, header: 'ab'.repeat(32), secrets }, () => ++checks >= 3)
    expect(result.outcome).toBe('skipped')
    expect(triedSecrets(result.tried)).toBe(3)
    expect(result.summary).toBe(
      'No variant matches. Secrets after #3 were not tried: diagnoses took all the time the inspector gives them. The verdict stands.',
    )
  })

  it('still names a match found before it stopped', async () => {
    let checks = 0
    const header = await sign(body, `${secrets[1]}\n`)
    const result = await diagnose({ body, header, secrets }, () => ++checks >= 3)
    expect(result.outcome).toBe('matched')
    expect(result.match).toMatchObject({ variant: 'secret_newline', secret: 2 })
  })

  it(`tries the first ${MAX_DIAGNOSED_SECRETS} secrets, and says so`, async () => {
    const header = await sign(body, `${secrets[MAX_DIAGNOSED_SECRETS]}\n`)
    const result = await diagnose({ body, header, secrets })
    expect(result.outcome).toBe('no_match')
    expect(triedSecrets(result.tried)).toBe(MAX_DIAGNOSED_SECRETS)
    expect(result.summary).toMatch(
      new RegExp(` Only the first ${MAX_DIAGNOSED_SECRETS} of the ${secrets.length} secrets are diagnosed\\.$`),
    )
  })

  it('lets other work run between one secret and the next', async () => {
    // Every variant of a mebibyte, for each secret: milliseconds a secret, which a delivery from
    // another sender waited behind, the whole diagnosis long, when it ran in one piece.
    const judge = createJudge(
      checkOptions({ auth: { mode: 'secret', secret: secrets } }),
      true,
      createDiagnosisBudget({ burstMs: Infinity }),
    )
    let turns = 0
    let judging = true
    const tick = () => {
      if (!judging) return
      turns++
      setImmediate(tick)
    }
    setImmediate(tick)
    const judgement = await judge.delivery(forged(hostileShape('mix').build(1024 * 1024)))
    judging = false
    expect(judgement.diagnosis?.outcome).toBe('no_match')
    expect(turns).toBeGreaterThanOrEqual(MAX_DIAGNOSED_SECRETS - 1)
  })

  it('spends no more than the allowance a judge gives it', async () => {
    let now = 0
    // Each look at the clock finds 10 ms gone: the 50 ms allowance is spent within five secrets.
    const budget = createDiagnosisBudget({ share: 0, burstMs: 50, now: () => (now += 10) })
    const judge = createJudge(checkOptions({ auth: { mode: 'secret', secret: secrets } }), true, budget)
    const judgement = await judge.delivery(forged(body))
    expect(judgement).toMatchObject({ verdict: 'refused', code: 'invalid_signature' })
    expect(judgement.diagnosis?.outcome).toBe('skipped')
    expect(triedSecrets(judgement.diagnosis?.tried ?? [])).toBeLessThan(6)
  })
})

describe('a sender that floods the inspector with refused deliveries', () => {
  it('gets each its verdict, and no more of the inspector than its diagnosis time: the rest are skipped, until it refills', async () => {
    // Gson's escapes, Unicode and Java whitespace mixed, at the size limit: every variant's text
    // differs from the body, so each is made and hashed, some tens of milliseconds a delivery.
    const body = hostileShape('mix').build(1024 * 1024)
    const { inspector: started, waitFor } = await inspector()
    const forge = () =>
      send(`${started.receiveUrl}/hooks`, {
        headers: { 'content-type': 'application/json', 'x-service-hmac-signature': 'ab'.repeat(32) },
        chunks: [body],
      })
    let sent = 0
    let last = await waitFor(0)
    // Bounded: at most 200 deliveries, each answered before the next is sent.
    while (sent < 200 && last.at(-1)?.diagnosis?.outcome !== 'skipped') {
      expect((await forge()).status).toBe(401)
      last = await waitFor(++sent)
    }
    const outcomes = last.map((record) => record.diagnosis?.outcome)
    expect(outcomes.at(-1), `${sent} deliveries`).toBe('skipped')
    expect(outcomes[0]).toBe('no_match')
    // Every one of them recorded with its verdict, whether diagnosed or not.
    expect(last.map((record) => [record.verdict, record.code])).toEqual(last.map(() => ['refused', 'invalid_signature']))
    const skipped = last.at(-1)
    if (skipped === undefined) throw new Error('no record')
    expect(detail(skipped).diagnosisDetail?.summary).toMatch(/^Not diagnosed/)
    // A person's next delivery, two seconds later, is diagnosed again: the allowance was overdrawn
    // by at most the last diagnosis, and half a second of it is back.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect((await forge()).status).toBe(401)
    expect((await waitFor(sent + 1)).at(-1)?.diagnosis?.outcome).toBe('no_match')
  }, 60_000)
})
