import { Agent } from 'node:http'
import { DEFAULT_MAX_BODY_SIZE, sign } from '@hookguard/core'
import { CHROMIUM_ARGS, chromiumMissing, chromiumPath } from '@hookguard/testkit/chromium'
import { type Browser, chromium, type Locator, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_RECORDS } from '../../src/ring.ts'
import { cleanup, inspector, SECRET, send } from '../helpers.ts'

const executablePath = chromiumPath()
if (executablePath === undefined) throw new Error(chromiumMissing())

const BURST = 2000
/** Requests in flight at once: a sender retrying a backlog, not one connection per delivery. */
const PARALLEL = 32
/**
 * The longest task the page may run while the burst arrives: a frozen tab is what the issue found.
 * Judged by the CPU time the renderer's main thread spent in the task, which Chromium's trace
 * records beside its wall time: on a machine busy with other work a task's wall time also counts
 * the time the scheduler gave to others (a 60 ms task read 530 ms beside a full test suite), and
 * that says nothing of the page.
 */
const LONGEST_TASK_MS = 200
/**
 * Tasks Chromium posts for its own garbage collectors (Oilpan's sweeper, V8's jobs), told apart by
 * where they were posted from. How long one runs is the collector's choice, and it grows with the
 * machine's load: with the whole suite beside it, one incremental sweep after the heavy burst read
 * 351 ms of CPU in 603 ms, where the same phase's longest task alone was 38 ms (likely its helper
 * threads starved and the main thread left to finish their work). The page's own tasks (script,
 * layout, paint, its data arriving) keep the 200 ms bound; the collectors' are held to a bound of
 * their own, about three times the longest seen beside the suite.
 */
const COLLECTOR_TASK = /cppgc::|v8::internal::/
const LONGEST_COLLECTOR_TASK_MS = 1000
/** How long the page has, after the last answer, to show what the server keeps. */
const SETTLE_MS = 10_000
/**
 * A bound against a hang, not a measure: the burst takes about 14 s alone, and 60 s beside another
 * full test suite on two cores, where it once ran past the project's 60 s.
 */
const BURST_TEST_MS = 180_000

/**
 * Deliveries as heavy as a request gets: a 4 KB path, a 2 KB query, 60 headers of 100 bytes and a
 * 20 KB body. More than the ring keeps, so that rows are dropped as well as added.
 */
const HEAVY_BURST = 600
const heavyPath = (n: number) => `/hooks/${'p'.repeat(4000)}/${n}?${'q=1&'.repeat(500)}`
const HEAVY_HEADERS = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-heavy-${i}`, 'v'.repeat(100)]))

let browser: Browser
let page: Page

beforeAll(async () => {
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 30_000 })
})

afterAll(async () => {
  await browser?.close()
  await cleanup()
})

// A test that failed midway leaves its trace running; the next starts its own.
afterEach(async () => {
  if (tracing) await stopTrace()
})

/** Resolves with `work`'s value, or rejects after `ms`: a frozen page never answers an evaluate. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms (the page's main thread is busy)`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** The text of `target`'s element, read within 5 s. */
function textOf(target: Locator, what: string): Promise<string | null> {
  return within(
    5000,
    what,
    target.evaluate((element) => element.textContent),
  )
}

/** The ids the page lists, newest first. */
function listedIds(target: Page): Promise<number[]> {
  return target.evaluate(() => [...document.querySelectorAll('[data-testid="row"]')].map((row) => Number(row.getAttribute('data-id'))))
}

describe('a burst of deliveries', () => {
  it(
    `keeps the page responsive through ${BURST} deliveries, and lists exactly what the server keeps`,
    async () => {
      const { inspector: running } = await inspector()
      page = await watchedPage(running.uiUrl)

      const body = '{"event":"order.paid","data":{"id":42}}'
      const signature = await sign(body, SECRET)
      const statuses = await sendAll(BURST, () => ({
        url: `${running.receiveUrl}/hooks`,
        headers: { 'x-service-hmac-signature': signature },
        body,
      }))
      expect(statuses).toHaveLength(BURST)
      expect(statuses.every((status) => status === 200)).toBe(true)

      // What the server keeps, through its list API; the page lists it newest (highest id) first.
      const kept = await keptIds(running.uiUrl, running.accessToken)
      expect(kept).toHaveLength(DEFAULT_MAX_RECORDS)
      expect(await lists(page, kept)).toEqual(kept)
      expect(await within(5000, 'reading the title', page.title())).toBe(`hookguard inspect (${DEFAULT_MAX_RECORDS})`)
      const burst = await longestTask(page)
      expectResponsive(burst)

      // Opened again with the ring full: the whole list arrives at once, and is drawn a frame at a time.
      await startTrace(page)
      await page.reload()
      await page.getByTestId('status').getByText('live').waitFor({ timeout: 15_000 })
      expect(await lists(page, kept)).toEqual(kept)
      const reload = await longestTask(page)
      expectResponsive(reload)
    },
    BURST_TEST_MS,
  )
})

describe('heavy deliveries', () => {
  it(
    `keeps the page responsive through ${HEAVY_BURST} deliveries of a 6 KB address and a 20 KB body, and opens a 1 MiB body without a long task`,
    async () => {
      const { inspector: running } = await inspector()
      page = await watchedPage(running.uiUrl)

      const body = JSON.stringify({ event: 'order.paid', data: { id: 42, note: 'x'.repeat(20_000) } })
      const signature = await sign(body, SECRET)
      const statuses = await sendAll(HEAVY_BURST, (n) => ({
        url: `${running.receiveUrl}${heavyPath(n)}`,
        headers: { ...HEAVY_HEADERS, 'x-service-hmac-signature': signature },
        body,
      }))
      expect(statuses).toHaveLength(HEAVY_BURST)
      expect(statuses.every((status) => status === 200)).toBe(true)
      const kept = await keptIds(running.uiUrl, running.accessToken)
      expect(kept).toHaveLength(DEFAULT_MAX_RECORDS)
      expect(await lists(page, kept)).toEqual(kept)
      const burst = await longestTask(page)
      expectResponsive(burst)

      // A body of the size limit, on one line (the worst to lay out), and JSON: shown as text and as its payload.
      const big = JSON.stringify({ note: 'abcdefghij'.repeat((DEFAULT_MAX_BODY_SIZE - 20) / 10) })
      const bigSignature = await sign(big, SECRET)
      const answer = await send(`${running.receiveUrl}/hooks/big`, {
        headers: { 'x-service-hmac-signature': bigSignature, 'content-length': String(Buffer.byteLength(big)) },
        chunks: [big],
      })
      expect(answer.status).toBe(200)
      const [id] = await keptIds(running.uiUrl, running.accessToken)
      await startTrace(page)
      await page.evaluate((opened) => {
        location.hash = `#/d/${opened}`
      }, id)
      await page.getByTestId('detail').getByText(`#${id} POST /hooks/big`).waitFor({ timeout: 15_000 })
      // The whole body is there, in the page, whether or not it is laid out yet.
      expect(await textOf(page.getByTestId('detail').getByTestId('body-text'), 'reading the body')).toBe(big)
      // Its payload is printed from the body once the reader asks, not with the detail.
      expect(await page.getByTestId('detail').getByTestId('payload').count()).toBe(0)
      await page.getByTestId('detail').getByTestId('payload-later').locator('summary').click()
      expect(await textOf(page.getByTestId('detail').getByTestId('payload'), 'reading the payload')).toBe(
        JSON.stringify(JSON.parse(big), null, 2),
      )
      await page.waitForTimeout(1000)
      const detail = await longestTask(page)
      expectResponsive(detail)
      // And a heavy delivery's detail shows its whole path and query, which its row only begins.
      await page.evaluate((opened) => {
        location.hash = `#/d/${opened}`
      }, kept[0])
      await page.getByTestId('detail').getByText(`#${kept[0]} POST `).waitFor({ timeout: 15_000 })
      const heading = await page.getByTestId('detail').locator('h2').textContent()
      expect(heading?.endsWith('q=1&'.repeat(500))).toBe(true)
      expect(heading?.length).toBeGreaterThan(6000)
    },
    BURST_TEST_MS,
  )
})

describe('a body cut at the size limit', () => {
  it('shows its text and no parsed payload, though the part kept is JSON', async () => {
    const { inspector: running } = await inspector()
    page = await watchedPage(running.uiUrl)
    const kept = `{"cut":"yes"}${' '.repeat(DEFAULT_MAX_BODY_SIZE - 13)}`
    const answer = await send(`${running.receiveUrl}/hooks/cut`, {
      headers: { 'x-service-hmac-signature': await sign(kept, SECRET) },
      chunks: [kept, ' tail that was never kept'],
    })
    expect(answer.status).toBe(413)
    const [id] = await keptIds(running.uiUrl, running.accessToken)
    await page.evaluate((opened) => {
      location.hash = `#/d/${opened}`
    }, id)
    await page.getByTestId('detail').getByText('cut at the size limit').waitFor({ timeout: 15_000 })
    expect(await textOf(page.getByTestId('detail').getByTestId('body-text'), 'reading the body')).toBe(kept)
    expect(await page.getByTestId('detail').getByTestId('payload').count()).toBe(0)
    expect(await page.getByTestId('detail').getByTestId('payload-later').count()).toBe(0)
  })
})

/** A new page on `uiUrl`, live, its tasks traced and its long tasks observed from its first script on. */
async function watchedPage(uiUrl: string): Promise<Page> {
  const opened = await browser.newPage()
  // Every task over 50 ms the page runs, by wall time: shown beside the CPU time.
  await opened.addInitScript(() => {
    const seen: number[] = []
    ;(window as { __longTasks?: number[] }).__longTasks = seen
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) seen.push(entry.duration)
    }).observe({ type: 'longtask', buffered: true })
  })
  await startTrace(opened)
  await opened.goto(uiUrl)
  await opened.getByTestId('status').getByText('live').waitFor({ timeout: 15_000 })
  return opened
}

/** Sends `count` deliveries, {@link PARALLEL} at a time, the n-th as `delivery(n)` makes it; their statuses. */
async function sendAll(
  count: number,
  delivery: (n: number) => { url: string; headers: Record<string, string>; body: string },
): Promise<number[]> {
  let next = 0
  const statuses: number[] = []
  // Connections of the burst's own, closed after it: kept in the shared pool, they would sit idle
  // while the test reads the page.
  const agent = new Agent({ keepAlive: true })
  try {
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < count) {
          const { url, headers, body } = delivery(next++)
          // With its length, as the service sends: a chunked body reserves the whole size limit of the
          // inspector's in-flight budget, which 32 at once would exhaust.
          const answer = await resending(() =>
            send(url, {
              agent,
              headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
              chunks: [body],
            }),
          )
          statuses.push(answer.status)
        }
      }),
    )
  } finally {
    agent.destroy()
  }
  return statuses
}

/**
 * How often one delivery is sent again after its kept-alive connection was reset. A server may close
 * an idle connection as a request is sent on it, and a sender then sends again (RFC 9112 §9.3.1;
 * Node's `reusedSocket`): beside another whole suite one of the 600 heavy sends was reset so, in
 * three runs of this file, and the test failed before it looked at the page it is about. A reset of
 * a new connection, or a third one of a delivery, still fails.
 */
const RESENDS = 2

async function resending<T>(sending: () => Promise<T>): Promise<T> {
  for (let resent = 0; ; resent++) {
    try {
      return await sending()
    } catch (error) {
      const { code, reusedSocket } = error as { code?: string; reusedSocket?: boolean }
      if (code !== 'ECONNRESET' || reusedSocket !== true || resent === RESENDS) throw error
    }
  }
}

async function keptIds(uiUrl: string, token: string): Promise<number[]> {
  const answer = await fetch(`${new URL(uiUrl).origin}/api/state`, { headers: { 'x-inspect-token': token } })
  const state = (await answer.json()) as { records: { id: number }[] }
  return state.records.map((record) => record.id).sort((a, b) => b - a)
}

/** The ids the page lists once it shows `kept`, or what it lists after {@link SETTLE_MS}. */
async function lists(target: Page, kept: number[]): Promise<number[]> {
  const deadline = Date.now() + SETTLE_MS
  let listed: number[] = []
  while (Date.now() < deadline) {
    listed = await within(deadline - Date.now() + 100, 'listing the rows', listedIds(target))
    if (listed.length === kept.length && listed.every((id, i) => id === kept[i])) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return listed
}

/**
 * Chromium's trace categories: the task each thread runs, with its wall and thread (CPU) time, and
 * V8's own events, among them its collectors' pauses inside a task.
 */
const TRACE_CATEGORIES = ['toplevel', 'v8']
const TASK_EVENT = 'ThreadControllerImpl::RunTask'
/**
 * V8's collectors at work on the thread that runs the page's script: a young-generation collection,
 * a full one's final pause, an incremental marking step. They run inside whichever of the page's
 * tasks allocated when they were due, and grow with the machine's load as the collectors' own
 * tasks do (see {@link COLLECTOR_TASK}): held to the collectors' bound, and named in a failure's
 * message. (Beside another test suite, one task of the reloaded page, posted on an IPC message,
 * once read 247 ms of CPU where the reload's longest reads 30 ms alone; the trace then did not say
 * what ran in it. At most 30 ms in six runs since.)
 */
const COLLECTOR_EVENT = /^(MinorGC|MajorGC|V8\.GC)/

interface TraceEvent {
  ph: string
  name: string
  pid: number
  tid: number
  /** Start, wall and thread time, in µs. */
  ts: number
  dur?: number
  tdur?: number
  args?: { name?: string; src_file?: string; src_func?: string }
}

interface LongestTasks {
  /** CPU time of the page's longest task less its collections, and of the collectors' longest. */
  cpuMs: number
  collectorCpuMs: number
  described: string
}

let tracing = false

async function startTrace(target: Page): Promise<void> {
  await browser.startTracing(target, { categories: TRACE_CATEGORIES })
  tracing = true
}

async function stopTrace(): Promise<Buffer> {
  tracing = false
  return browser.stopTracing()
}

/**
 * The longest task the renderer's main thread ran since tracing started, by CPU time less what
 * V8's collectors took of it, and the collectors' longest, their own tasks (see
 * {@link COLLECTOR_TASK}) and their pauses inside the page's; and the longest the page's own
 * `longtask` observer saw, by wall time. Ends the trace.
 */
async function longestTask(target: Page): Promise<LongestTasks> {
  const wallMs = await within(
    5000,
    'reading the long tasks',
    target.evaluate(() => Math.max(0, ...((window as { __longTasks?: number[] }).__longTasks ?? []))),
  )
  const trace = JSON.parse((await stopTrace()).toString()) as { traceEvents: TraceEvent[] }
  const thread = (event: TraceEvent) => `${event.pid}:${event.tid}`
  const main = new Set(
    trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map(thread),
  )
  const onMain = trace.traceEvents.filter((e) => e.ph === 'X' && main.has(thread(e)))
  const tasks = onMain.filter((e) => e.name === TASK_EVENT)
  const collections = outermost(onMain.filter((e) => COLLECTOR_EVENT.test(e.name)))
  const byCollector = (task: TraceEvent) => COLLECTOR_TASK.test(task.args?.src_func ?? '')
  const collectors = tasks.filter(byCollector)
  const others = tasks.filter((task) => !byCollector(task))
  // A trace without the main thread's tasks would pass any bound: it must have recorded them.
  expect(others.length).toBeGreaterThan(0)
  const cpu = (task: TraceEvent | undefined) => (task?.tdur ?? 0) / 1000
  const wall = (task: TraceEvent | undefined) => (task?.dur ?? 0) / 1000
  // Each task's collections, summed once: the measures below read them again and again.
  const collected = new Map(
    others.map((task) => [
      task,
      collections
        .filter((c) => thread(c) === thread(task) && c.ts >= task.ts && c.ts < task.ts + (task.dur ?? 0))
        .reduce((sum, c) => sum + cpu(c), 0),
    ]),
  )
  const collectedIn = (task: TraceEvent) => collected.get(task) ?? 0
  const own = (task: TraceEvent) => cpu(task) - collectedIn(task)
  const longestBy = (list: TraceEvent[], measure: (task: TraceEvent) => number) =>
    list.reduce<TraceEvent | undefined>((a, b) => (a === undefined || measure(b) > measure(a) ? b : a), undefined)
  const longest = longestBy(others, own) as TraceEvent
  const collector = longestBy(collectors, cpu)
  const collectedMost = longestBy(others, collectedIn)
  const collectorCpuMs = Math.max(cpu(collector), collectedMost === undefined ? 0 : collectedIn(collectedMost))
  // Where Chromium posted each from, which is what tells the page's work from the collectors'.
  const posted = (task: TraceEvent | undefined) => `posted by ${task?.args?.src_func ?? '?'} (${task?.args?.src_file ?? '?'})`
  return {
    cpuMs: own(longest),
    collectorCpuMs,
    described: [
      `the longest main-thread task: ${own(longest).toFixed(0)} ms of CPU (${collectedIn(longest).toFixed(0)} ms more collecting) in ${wall(longest).toFixed(0)} ms, ${posted(longest)}`,
      `the collectors' longest task: ${cpu(collector).toFixed(0)} ms of CPU in ${wall(collector).toFixed(0)} ms, ${posted(collector)}`,
      `the most collecting in one of the page's tasks: ${collectedMost === undefined ? 0 : collectedIn(collectedMost).toFixed(0)} ms of CPU`,
      `the longest the page's longtask observer saw: ${wallMs.toFixed(0)} ms`,
    ].join('; '),
  }
}

/** The events not inside another of them on the same thread: nested scopes are counted once. */
function outermost(events: TraceEvent[]): TraceEvent[] {
  const kept: TraceEvent[] = []
  const ends = new Map<string, number>()
  for (const event of [...events].sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0))) {
    const key = `${event.pid}:${event.tid}`
    if (event.ts < (ends.get(key) ?? Number.NEGATIVE_INFINITY)) continue
    kept.push(event)
    ends.set(key, event.ts + (event.dur ?? 0))
  }
  return kept
}

/** No task of the page's longer than {@link LONGEST_TASK_MS} of CPU, none of the collectors' longer than theirs. */
function expectResponsive(tasks: LongestTasks): void {
  expect(tasks.cpuMs, tasks.described).toBeLessThan(LONGEST_TASK_MS)
  expect(tasks.collectorCpuMs, tasks.described).toBeLessThan(LONGEST_COLLECTOR_TASK_MS)
}
