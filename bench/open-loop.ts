/**
 * An open-loop load generator: requests leave on a fixed schedule whatever the server does, and each
 * one's latency is counted from the time it was due, not from when it was sent. A closed-loop tool
 * (autocannon, wrk) waits for an answer before the next request on a connection, so a slow answer
 * delays the requests behind it and hides their wait (coordinated omission); on two cores its p99
 * is mostly its own scheduling. Here a late timer only makes the requests due meanwhile leave
 * together, and their lateness is in their latency.
 */
import { Agent, request } from 'node:http'
import { quantile } from './measure.ts'

export interface OpenLoopOptions {
  port: number
  path: string
  /** Requests a second. */
  rate: number
  durationS: number
  /** The `i`th request's body and headers. */
  delivery(i: number): { body: Buffer; headers: Record<string, string> }
  /** Milliseconds after the last request is due before those still unanswered count as errors. */
  graceMs?: number
}

export interface OpenLoopResult {
  rate: number
  durationS: number
  sent: number
  answered: number
  errors: number
  statuses: Record<string, number>
  /** Milliseconds from when each request was due to the end of its answer. */
  p50: number
  p99: number
  max: number
  /** How late the generator sent, at worst (its own timer), in milliseconds. */
  sendLagMax: number
  /** Every answer's latency, ascending: to pool rounds before taking quantiles. */
  latencies: number[]
}

/** Rounds of one server as one run: their latencies pooled, so quantiles are of every answer. */
export function pooled(rounds: OpenLoopResult[]): OpenLoopResult {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b)
  const statuses: Record<string, number> = {}
  for (const round of rounds)
    for (const [status, count] of Object.entries(round.statuses)) statuses[status] = (statuses[status] ?? 0) + count
  const sum = (pick: (round: OpenLoopResult) => number) => rounds.reduce((total, round) => total + pick(round), 0)
  return {
    rate: rounds[0]?.rate ?? 0,
    durationS: sum((round) => round.durationS),
    sent: sum((round) => round.sent),
    answered: latencies.length,
    errors: sum((round) => round.errors),
    statuses,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: latencies.at(-1) ?? Number.NaN,
    sendLagMax: Math.max(...rounds.map((round) => round.sendLagMax)),
    latencies,
  }
}

export function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const { port, path, rate, durationS, delivery, graceMs = 10_000 } = options
  const total = Math.round(rate * durationS)
  const interval = 1000 / rate
  // Enough sockets that no request waits for one: the schedule, not the pool, sets the pace.
  const agent = new Agent({ keepAlive: true, maxSockets: 4096 })
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  let errors = 0
  let next = 0
  let settled = 0
  let sendLagMax = 0
  const start = performance.now() + 20

  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(deadline)
      agent.destroy()
      latencies.sort((a, b) => a - b)
      resolve({
        rate,
        durationS,
        sent: next,
        answered: latencies.length,
        errors: errors + (total - settled),
        statuses,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: latencies.at(-1) ?? Number.NaN,
        sendLagMax,
        latencies,
      })
    }
    const deadline = setTimeout(finish, durationS * 1000 + graceMs + 20)
    const done = () => {
      if (++settled === total) finish()
    }
    const fire = (i: number, due: number) => {
      const { body, headers } = delivery(i)
      const req = request(
        { agent, host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'content-length': String(body.byteLength) } },
        (res) => {
          res.resume()
          res.once('end', () => {
            const key = String(res.statusCode)
            statuses[key] = (statuses[key] ?? 0) + 1
            latencies.push(performance.now() - due)
            done()
          })
        },
      )
      req.once('error', () => {
        errors++
        done()
      })
      req.end(body)
    }
    const pump = () => {
      const now = performance.now()
      while (next < total) {
        const due = start + next * interval
        if (due > now) break
        sendLagMax = Math.max(sendLagMax, now - due)
        fire(next++, due)
      }
      if (next < total) setTimeout(pump, Math.max(0, start + next * interval - performance.now() - 0.5))
    }
    setTimeout(pump, 20)
  })
}
