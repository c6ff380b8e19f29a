/**
 * What refusing an unauthenticated request costs: `verifySignature` (Node build) with a bogus
 * signature over 1 MiB bodies built to make the fallback forms expensive, as a multiple of one
 * bare HMAC over the same bytes; then every entry point of `createReceiver` (each mode's message
 * address, the token address) refusing each hostile shape of testkit/src/hostile.ts, the same
 * way; then the latency of valid deliveries to a `webhook()` server while four clients send such
 * bodies. Start it through run.ts, or alone:
 * `node --expose-gc --import tsx bench/adversarial.ts [--quick] [--no-http]`.
 *
 * `--compare <path to another Node build's index.js>` measures that build beside this one, same
 * bodies, same rounds, and prints both (a one-off for notes.md; run.ts never passes it).
 */
import { type ChildProcess, fork } from 'node:child_process'
import { createHmac, createSecretKey } from 'node:crypto'
import { Agent, request } from 'node:http'
import { relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createReceiver, type IncomingRequest, type Receiver, sign, verifySignature } from '@hookguard/core'
import { type RefusalEntry, refusalEntries } from '@hookguard/testkit/entry-points'
import { HOSTILE_SHAPES, type HostileShape, hostileShape } from '@hookguard/testkit/hostile'
import { makePayload } from '@hookguard/testkit/payload'
import { type HostileBodies, repeatingUnits, sampleUnits, unitsAndMixes } from '@hookguard/testkit/units'
import { PATH, SECRET, type ServerMessage } from './http-server.ts'
import { type Candidate, canCollect, measureSamples, median, quantile, RESULT_PREFIX, type Sample } from './measure.ts'

const argv = process.argv.slice(2)
const quick = argv.includes('--quick')
const comparePath = argv.find((_, i) => argv[i - 1] === '--compare') ?? argv.find((a) => a.startsWith('--compare='))?.slice(10)
const withHttp = !argv.includes('--no-http')
/** `--units N`: a sample of N units (and the named ones) instead of every one, for a look in minutes rather than hours. */
const unitsArg = argv.find((_, i) => argv[i - 1] === '--units')

/**
 * Batches are timed by this process's CPU time, not by the wall clock: on a shared two-core
 * machine a batch's wall time is mostly how long it waited for a core, which differs from batch to
 * batch by more than the figures do. Every call measured here is synchronous work on this thread
 * (node:crypto hashes in place, the stripper is WebAssembly), so CPU time is its cost; what runs
 * on V8's helper threads on its behalf (collection) is counted too, as the server would pay it.
 */
const cpuTime = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

const resolvedCore = import.meta.resolve('@hookguard/core')
// As in micro.ts: the Node build as users install it, not tsx's transform of the source.
if (!resolvedCore.includes('/dist/node/')) {
  throw new Error(`@hookguard/core resolved to ${resolvedCore}, not the Node build; run without --conditions=@hookguard/source`)
}

const SIZE = 1024 * 1024
/** Three secrets, as while rotating: every candidate form is hashed once per secret. */
const SECRETS = [SECRET, 'hookguard-bench-rotated-5a0c9e13f7', 'hookguard-bench-previous-b2d48e6a01'] as const
const SECRET_COUNTS = [1, 3] as const
/** Well-formed hex that no secret signed any form of these bodies with. */
const BOGUS = createHmac('sha256', 'not-any-configured-secret').update('bogus').digest('hex')

export interface HostileBody extends Sample {
  label: string
  /** False for the ordinary deliveries measured for reference. */
  hostile: boolean
}

/** The shapes `verifySignature` is measured on: the ones built against its fallback forms, and two ordinary deliveries. */
const SIGNATURE_SHAPES = ['lt', 'escapes', 'u2028', 'u3000', 'spaces', 'mix', 'lt-u3000', 'compact', 'pretty'] as const

export function hostileBodies(): HostileBody[] {
  return SIGNATURE_SHAPES.map((id) => bodyOf(hostileShape(id)))
}

function bodyOf({ id, label, hostile, build }: HostileShape): HostileBody {
  const bytes = build(SIZE)
  if (bytes.length !== SIZE) throw new Error(`adversarial: ${id} is ${bytes.length} bytes`)
  return { id, label, hostile, bytes, size: SIZE, sizeLabel: '1 MiB' }
}

/**
 * The largest body the signature's fallback forms are tried on (`MAX_GSON_FALLBACK_BODY` and
 * `MAX_UNICODE_FALLBACK_BODY` in packages/core/src/canonical.ts, stated in the README): above
 * it they are skipped, so a 1 MiB body never meets them, and this is where they cost most.
 */
const FALLBACK_BOUND = 64 * 1024
/** The shapes built against the fallback forms, measured again at their bound. */
const FALLBACK_SHAPES = ['lt', 'escapes', 'u2028', 'u3000', 'mix', 'lt-u3000'] as const

function atFallbackBound({ id, label, hostile, build }: HostileShape): HostileBody {
  const bytes = build(FALLBACK_BOUND)
  if (bytes.length !== FALLBACK_BOUND) throw new Error(`adversarial: ${id} is ${bytes.length} bytes at 64 KiB`)
  return { id: `${id}@64k`, label: `${label}; 64 KiB, the fallbacks' bound`, hostile, bytes, size: FALLBACK_BOUND, sizeLabel: '64 KiB' }
}

/** Every hostile shape at 1 MiB, and those built against the fallback forms at their bound too. */
function entryPointBodies(): HostileBody[] {
  return [...HOSTILE_SHAPES.map(bodyOf), ...FALLBACK_SHAPES.map((id) => atFallbackBound(hostileShape(id)))]
}

/** What is called of a build: the same function, loaded from the workspace or by path. */
type Verify = (
  body: Uint8Array,
  header: string,
  secrets: string | readonly string[],
  options?: { unicodeWhitespace?: boolean },
) => Promise<boolean>

export interface RefusalFigure {
  /** `after`: the workspace build; `before`: the one given to `--compare`. */
  build: 'after' | 'before'
  secrets: number
  /** Undefined for a build called without the option (one from before it existed). */
  unicodeWhitespace?: boolean
  /** Median over rounds of the call's time / one bare HMAC's in the same round; quartiles of those ratios. */
  ratio: number
  q1: number
  q3: number
  ns: number
}

/** What run.ts records of this part. */
export interface AdversarialFigures {
  runtime: string
  core: string
  size: number
  results: RefusalResult[]
  /** Every entry point of `createReceiver` refusing every hostile shape (runs from before it was added have none). */
  entryPoints?: EntryResult[]
  /** Every repeated unit through every entry point, on both builds (runs from before it was added have none). */
  units?: UnitsResult
  http?: UnderAttackResult
}

export interface RefusalResult {
  id: string
  label: string
  hostile: boolean
  size: number
  /** One bare HMAC over the body, median ns. */
  floorNs: number
  rounds: number
  figures: RefusalFigure[]
}

const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
const floorKey = createSecretKey(Buffer.from(SECRET))

/** The refusal is the expected outcome; a bogus signature that verified would be a bug, not a data point. */
const refused = (ok: boolean): true => {
  if (ok) throw new Error('adversarial: a bogus signature verified')
  return true
}

interface Variant {
  build: RefusalFigure['build']
  secrets: number
  unicodeWhitespace?: boolean
}
const variantName = (v: Variant) =>
  `${v.build} ${v.secrets}s${v.unicodeWhitespace === undefined ? '' : v.unicodeWhitespace ? ' unicode' : ' default'}`

function refusalCandidate(verify: Verify, variant: Variant): Candidate<HostileBody> {
  const secrets = SECRETS.slice(0, variant.secrets)
  const options = variant.unicodeWhitespace === undefined ? undefined : { unicodeWhitespace: variant.unicodeWhitespace }
  return {
    name: variantName(variant),
    async prepare({ bytes }) {
      const body = buffer(bytes)
      return { async: true, call: () => verify(body, BOGUS, secrets, options).then(refused) }
    },
  }
}

async function measureRefusals(bodies: readonly HostileBody[], before: Verify | undefined): Promise<RefusalResult[]> {
  const variants: Variant[] = []
  for (const unicodeWhitespace of [false, true]) {
    for (const secrets of SECRET_COUNTS) variants.push({ build: 'after', secrets, unicodeWhitespace })
  }
  // The build from before the option was added always tried the Unicode-whitespace form, so one
  // variant per secret count covers both settings.
  if (before) for (const secrets of SECRET_COUNTS) variants.push({ build: 'before', secrets })
  const candidates: Candidate<HostileBody>[] = [
    {
      // One HMAC over the body as received, key imported once: what every figure is a multiple of.
      name: 'floor',
      async prepare({ bytes }) {
        const body = buffer(bytes)
        return { async: false, call: () => createHmac('sha256', floorKey).update(body).digest() }
      },
    },
    ...variants.map((v) => refusalCandidate(v.build === 'after' ? verifySignature : (before as Verify), v)),
  ]
  const measured = await measureSamples(bodies, candidates, {
    // The refusals of the old build last up to a hundred HMACs: a batch is then a single call, so
    // rounds, not batch length, are what averages them out.
    // Quick (CI) runs prove that every path runs and refuses; their figures mean nothing.
    rounds: quick ? 2 : 15,
    batchMs: quick ? 2 : 25,
    warmupMs: quick ? 10 : 250,
    floor: 'floor',
    clock: cpuTime,
    log: (line) => console.error(`adversarial: ${line}`),
  })
  return measured.map(({ sample, candidates: results }) => {
    const floor = results.find((c) => c.name === 'floor')
    if (!floor) throw new Error('adversarial: no floor figure')
    return {
      id: sample.id,
      label: sample.label,
      hostile: sample.hostile,
      size: sample.size,
      floorNs: floor.ns,
      rounds: floor.rounds,
      figures: variants.map((v): RefusalFigure => {
        const c = results.find((r) => r.name === variantName(v))
        if (!c) throw new Error(`adversarial: no figure for ${variantName(v)}`)
        return { ...v, ratio: c.ratio, q1: c.q1, q3: c.q3, ns: c.ns }
      }),
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Every entry point: a request refused by `createReceiver(...).verify` or `.token`, in process,
// for every hostile shape, as a multiple of one HMAC over the same body.

export interface EntryFigure {
  entry: string
  label: string
  /** Secrets configured (mode `secret` with rotation): the contract's bound is per configured secret. */
  secrets?: number
  /** What it answered (every call is checked against it): a refusal, or 2xx where mode 'none' hands a JSON body on. */
  status: number
  ratio: number
  q1: number
  q3: number
  ns: number
}

export interface EntryResult {
  id: string
  label: string
  hostile: boolean
  size: number
  floorNs: number
  rounds: number
  figures: EntryFigure[]
}

interface EntryPoint {
  id: string
  label: string
  /** Secrets configured, where more than one. */
  secrets?: number
  receiver: keyof BenchReceivers
  address: 'verify' | 'token'
  request(body: Buffer, text: () => string): IncomingRequest
}

interface BenchReceivers {
  secret: Receiver
  secrets: Receiver
  basic: Receiver
  oauth2: Receiver
  none: Receiver
  token: Receiver
}

const OAUTH = { mode: 'oauth2', appId: 'wx-app-bench', secret: 'hookguard-bench-app-secret-3c9e71' } as const
const OTHER_APP_SECRET = 'hookguard-bench-other-secret-8d02f4'
const JSON_TYPE = { 'content-type': 'application/json' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }
/** A token of the right app and shape, signed with a key derived from another secret: checked in full, then refused. */
let forgedToken = ''

const inProcess = (body: Buffer, headers: Record<string, string>, url = PATH): IncomingRequest => ({ method: 'POST', url, headers, body })

const ENTRY_POINTS: readonly EntryPoint[] = [
  {
    id: 'secret-1',
    label: '`secret`, 1 secret',
    receiver: 'secret',
    address: 'verify',
    request: (body) => inProcess(body, { ...JSON_TYPE, 'x-service-hmac-signature': BOGUS }),
  },
  {
    id: 'secret-3',
    label: '`secret`, 3 secrets',
    secrets: SECRETS.length,
    receiver: 'secrets',
    address: 'verify',
    request: (body) => inProcess(body, { ...JSON_TYPE, 'x-service-hmac-signature': BOGUS }),
  },
  {
    id: 'basic',
    label: '`basic`',
    receiver: 'basic',
    address: 'verify',
    request: (body) => inProcess(body, { ...JSON_TYPE, authorization: `Basic ${Buffer.from('bench-user:guess').toString('base64')}` }),
  },
  {
    id: 'oauth2-query',
    label: '`oauth2`, query token',
    receiver: 'oauth2',
    address: 'verify',
    request: (body) => inProcess(body, JSON_TYPE, `${PATH}?access_token=${forgedToken}`),
  },
  {
    id: 'oauth2-bearer',
    label: '`oauth2`, Bearer token',
    receiver: 'oauth2',
    address: 'verify',
    request: (body) => inProcess(body, { ...JSON_TYPE, authorization: `Bearer ${forgedToken}` }),
  },
  {
    // The token as the form's last field: the whole body is scanned for it, then it is checked.
    id: 'oauth2-form',
    label: '`oauth2`, form token',
    receiver: 'oauth2',
    address: 'verify',
    request: (body) => inProcess(body, FORM_TYPE),
  },
  { id: 'none', label: '`none`', receiver: 'none', address: 'verify', request: (body) => inProcess(body, JSON_TYPE) },
  {
    id: 'token-get',
    label: 'token address, GET',
    receiver: 'token',
    address: 'token',
    request: (_, text) => ({ method: 'GET', url: `/token?${text()}`, headers: {}, body: null }),
  },
  {
    id: 'token-post',
    label: 'token address, POST',
    receiver: 'token',
    address: 'token',
    request: (body) => inProcess(body, FORM_TYPE, '/token'),
  },
]

async function benchReceivers(): Promise<BenchReceivers> {
  // Over the 1 MiB bodies, so that every request reaches its check rather than the size limit.
  const maxBodySize = 2 * SIZE
  const other = createReceiver({ auth: { ...OAUTH, secret: OTHER_APP_SECRET } }, { role: 'token' })
  const query = new URLSearchParams({ appid: OAUTH.appId, secret: OTHER_APP_SECRET, grant_type: 'client_credentials' })
  const answer = await other.token({ method: 'GET', url: `/token?${query}`, headers: {}, body: null })
  forgedToken = (JSON.parse(answer.body) as { access_token: string }).access_token
  return {
    secret: createReceiver({ auth: { mode: 'secret', secret: SECRET }, maxBodySize }),
    secrets: createReceiver({ auth: { mode: 'secret', secret: [...SECRETS] }, maxBodySize }),
    basic: createReceiver({ auth: { mode: 'basic', username: 'bench-user', password: 'hookguard-bench-password-61c0' }, maxBodySize }),
    oauth2: createReceiver({ auth: OAUTH, maxBodySize }),
    none: createReceiver({ auth: { mode: 'none' }, maxBodySize }),
    // The token address keeps its own small limit whatever maxBodySize is.
    token: createReceiver({ auth: OAUTH, maxBodySize }, { role: 'token' }),
  }
}

function entryCandidate(receivers: BenchReceivers, entry: EntryPoint, statuses: Map<string, number>): Candidate<HostileBody> {
  const receiver = receivers[entry.receiver]
  return {
    name: entry.id,
    async prepare({ id, bytes }) {
      const withToken = entry.id === 'oauth2-form' ? Buffer.concat([bytes, Buffer.from(`&access_token=${forgedToken}`)]) : buffer(bytes)
      let text: string | undefined
      const textOf = () => {
        text ??= withToken.toString('utf8')
        return text
      }
      const answer = async () => {
        const request = entry.request(withToken, textOf)
        if (entry.address === 'token') return (await receiver.token(request)).status
        const result = await receiver.verify(request)
        return result.ok ? 200 : result.response.status
      }
      const status = await answer()
      // Only mode 'none' hands a body on (one that is JSON); everywhere else a 2xx is a bug.
      if (status < 400 && entry.id !== 'none') throw new Error(`adversarial: ${entry.id} answered ${status} for ${id}`)
      statuses.set(`${entry.id} ${id}`, status)
      return { async: true, call: async () => (await answer()) === status }
    },
  }
}

async function measureEntryPoints(): Promise<EntryResult[]> {
  const receivers = await benchReceivers()
  const statuses = new Map<string, number>()
  const candidates: Candidate<HostileBody>[] = [
    {
      name: 'floor',
      async prepare({ bytes }) {
        const body = buffer(bytes)
        return { async: false, call: () => createHmac('sha256', floorKey).update(body).digest() }
      },
    },
    ...ENTRY_POINTS.map((entry) => entryCandidate(receivers, entry, statuses)),
  ]
  const measured = await measureSamples(entryPointBodies(), candidates, {
    rounds: quick ? 2 : 9,
    batchMs: quick ? 2 : 20,
    warmupMs: quick ? 10 : 100,
    floor: 'floor',
    clock: cpuTime,
    log: (line) => console.error(`adversarial: entry points, ${line}`),
  })
  return measured.map(({ sample, candidates: results }) => {
    const floor = results.find((c) => c.name === 'floor')
    if (!floor) throw new Error('adversarial: no floor figure')
    return {
      id: sample.id,
      label: sample.label,
      hostile: sample.hostile,
      size: sample.size,
      floorNs: floor.ns,
      rounds: floor.rounds,
      figures: ENTRY_POINTS.map((entry): EntryFigure => {
        const c = results.find((r) => r.name === entry.id)
        if (!c) throw new Error(`adversarial: no figure for ${entry.id}`)
        return {
          entry: entry.id,
          label: entry.label,
          ...(entry.secrets !== undefined && { secrets: entry.secrets }),
          status: statuses.get(`${entry.id} ${sample.id}`) ?? 0,
          ratio: c.ratio,
          q1: c.q1,
          q3: c.q3,
          ns: c.ns,
        }
      }),
    }
  })
}

// ---------------------------------------------------------------------------------------------
// Every body that repeats one unit of one to three of the bytes the core's scans compare against
// (testkit/src/units.ts), at 64 KiB and 1 MiB, through every entry point of testkit's table, on the
// Node build and on the Web build (against `crypto.subtle.sign`). Tens of thousands of units: each
// (unit, entry point, size, build) is timed by one call, as a multiple of one HMAC of that size on
// that build, and the worst of each entry point is measured again in rounds, as the rest of this
// file measures. The contract: at most 8 HMACs per configured secret, everywhere.

export interface UnitFigure {
  build: 'node' | 'web'
  entry: string
  label: string
  secrets: number
  /** HMACs a secret a refusal through this entry point may cost, where not the contract's 8 (the entry point's own bound). */
  hmacsPerSecret?: number
  size: number
  /** The unit whose body cost most in the screening, as printable text, or the mix (`a mix of …`). */
  worst: string
  /** Its ratio in the screening (one call), and measured again in rounds (median; quartiles). */
  screened: number
  ratio: number
  q1: number
  q3: number
}

export interface UnitsResult {
  units: number
  /** Every unit of the table, or a sample (`--units N`). */
  every: boolean
  sizes: number[]
  figures: UnitFigure[]
}

// 16 KiB: the bound of the Unicode-whitespace form (`MAX_UNICODE_FALLBACK_BODY`), where it costs most.
const UNIT_SIZES = [16 * 1024, 64 * 1024, SIZE] as const

interface UnitBuild {
  build: UnitFigure['build']
  entries: RefusalEntry[]
  /** One HMAC over `body` on this build, with one key. */
  hmac(body: Uint8Array): Promise<unknown>
}

async function unitBuilds(): Promise<UnitBuild[]> {
  const maxBodySize = 2 * SIZE
  const web = (await import(new URL('../packages/core/dist/web/index.js', import.meta.url).href)) as {
    createReceiver: typeof createReceiver
  }
  const subtleKey = await crypto.subtle.importKey('raw', Buffer.from(SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return [
    {
      build: 'node',
      entries: await refusalEntries(createReceiver, maxBodySize),
      hmac: async (body) => createHmac('sha256', floorKey).update(body).digest(),
    },
    {
      build: 'web',
      entries: await refusalEntries(web.createReceiver, maxBodySize),
      hmac: (body) => crypto.subtle.sign('HMAC', subtleKey, body as Uint8Array<ArrayBuffer>),
    },
  ]
}

/** One HMAC's time at `size` on a build: the median of a few batches. */
async function hmacMs(build: UnitBuild, size: number): Promise<number> {
  const body = new Uint8Array(size).fill(0x61)
  const calls = Math.max(5, Math.round((4 * 1024 * 1024) / size))
  const times: number[] = []
  for (let round = 0; round < 7; round++) {
    const start = cpuTime()
    for (let i = 0; i < calls; i++) await build.hmac(body)
    times.push((cpuTime() - start) / calls)
  }
  return median(times)
}

async function measureUnits(): Promise<UnitsResult> {
  const every = unitsArg === undefined && !quick
  const units = every ? repeatingUnits() : sampleUnits(quick ? 4 : Number(unitsArg ?? 64))
  // The units repeated, and bodies drawn at random from groups of them, where a pass that branches
  // on each byte's kind mispredicts.
  const candidates = unitsAndMixes(units)
  const builds = await unitBuilds()
  const worst = new Map<string, { build: UnitBuild; entry: RefusalEntry; size: number; made: HostileBodies; ratio: number }>()
  for (const size of UNIT_SIZES) {
    for (const build of builds) {
      const floor = await hmacMs(build, size)
      for (const [n, made] of candidates.entries()) {
        if (n % 1000 === 0) console.error(`adversarial: units, ${build.build}, ${size / 1024} KiB, ${n} of ${candidates.length}`)
        const body = made.body(size)
        for (const entry of build.entries) {
          // Timed and checked in one call: tens of thousands of units make each call count.
          const start = cpuTime()
          const status = await entry.call(body)
          const ratio = (cpuTime() - start) / floor / entry.secrets
          if (status < 400 && !entry.id.startsWith('none')) throw new Error(`adversarial: ${entry.id} answered ${status} for ${made.label}`)
          // Mode 'none' hands a JSON body on (a body of digits is a number): a delivery, whose
          // parse is the application's cost, not a refusal (as in the entry-point table).
          if (status < 400) continue
          const key = `${build.build} ${entry.id} ${size}`
          if (ratio > (worst.get(key)?.ratio ?? -1)) worst.set(key, { build, entry, size, made, ratio })
        }
      }
    }
  }
  const figures: UnitFigure[] = []
  for (const { build, entry, size, made, ratio: screened } of worst.values()) {
    // The worst body again, in rounds, interleaved with the HMAC: the figure reported.
    const body = made.body(size)
    const ratios: number[] = []
    const calls = Math.max(1, Math.round(((quick ? 256 : 2048) * 1024) / size))
    for (let round = 0; round < (quick ? 2 : 9); round++) {
      let start = cpuTime()
      for (let i = 0; i < calls; i++) await build.hmac(body)
      const floor = (cpuTime() - start) / calls
      start = cpuTime()
      for (let i = 0; i < calls; i++) await entry.call(body)
      ratios.push((cpuTime() - start) / calls / floor / entry.secrets)
    }
    const figure: UnitFigure = {
      build: build.build,
      entry: entry.id,
      label: entry.label,
      secrets: entry.secrets,
      ...(entry.hmacsPerSecret !== undefined && { hmacsPerSecret: entry.hmacsPerSecret }),
      size,
      worst: made.label,
      screened,
      ratio: median(ratios),
      q1: quantile(ratios, 0.25),
      q3: quantile(ratios, 0.75),
    }
    console.error(
      `adversarial: units, ${figure.build} ${figure.entry} ${size / 1024} KiB: worst ${figure.worst}, ${figure.ratio.toFixed(2)}× a secret`,
    )
    figures.push(figure)
  }
  return { units: units.length, every, sizes: [...UNIT_SIZES], figures }
}

// ---------------------------------------------------------------------------------------------
// HTTP: valid deliveries' latency while hostile clients send 1 MiB bodies with a bogus signature.

export const HTTP_FRAMEWORK = 'express5'
const HOSTILE_CLIENTS = 4
/**
 * The bodies the hostile clients send: all `<`, the review's case; and the escapes at a fifth,
 * the body that the micro figures above show still costs most by default.
 */
const ATTACK_BODIES = ['lt', 'escapes'] as const
/** A valid delivery every 10 ms (or as soon as the previous one is answered, if later): light, so its latency shows what the hostile clients do. */
const VALID_INTERVAL_MS = 10
const HTTP_ROUNDS = quick ? 1 : 3
const PHASE_S = quick ? 0.3 : 4

export interface LatencyFigures {
  medianMs: number
  p99Ms: number
  /** Valid deliveries answered in the phase, all rounds together. */
  requests: number
}

export interface AttackFigures extends LatencyFigures {
  body: string
  label: string
  /** Hostile requests refused (401) per second, all clients together. */
  refusalsPerSec: number
  /** Server CPU per refusal: the phase's CPU less the valid deliveries' (at their quiet cost), over the refusals. */
  cpuMsPerRefusal: number
}

export interface UnderAttackResult {
  build: RefusalFigure['build']
  framework: string
  hostileClients: number
  validIntervalMs: number
  phaseS: number
  rounds: number
  quiet: LatencyFigures
  attacks: AttackFigures[]
}

/**
 * A Node `--import` that points the Express adapter's import of `@hookguard/core` at another build,
 * so that the forked server runs it: a resolve hook, registered from a data: URL so that no file is
 * needed for a one-off comparison. Only that adapter's import is redirected: http-server.ts also
 * loads the others, and a newer adapter may need exports an older core does not have.
 */
function coreRedirect(url: string): string {
  const hooks = `export function resolve(specifier, context, next) {
    const redirect = specifier === '@hookguard/core' && (context.parentURL ?? '').includes('/packages/express/dist/')
    return redirect ? { url: ${JSON.stringify(url)}, shortCircuit: true } : next(specifier, context)
  }`
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)})`
  return `data:text/javascript,${encodeURIComponent(register)}`
}

interface Server {
  port: number
  child: ChildProcess
  /** User plus system CPU of the server process so far, in ms. */
  cpu(): Promise<number>
}

function startServer(coreUrl: string | undefined): Promise<Server> {
  // http-server.ts serves `webhook()` of the built adapter; the child inherits tsx's loader.
  const execArgv = coreUrl === undefined ? process.execArgv : [...process.execArgv, '--import', coreRedirect(coreUrl)]
  const child = fork(new URL('./http-server.ts', import.meta.url), [HTTP_FRAMEWORK, 'webhook'], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  // Dies with this process, however it ends (http-server.ts also exits when the channel closes).
  process.once('exit', () => child.kill())
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error('adversarial: the server did not start')), 20_000)
    child.once('error', fail)
    const exited = (code: number | null) => fail(new Error(`adversarial: the server exited with ${code} before listening`))
    child.once('exit', exited)
    child.once('message', (message: ServerMessage) => {
      clearTimeout(timer)
      child.off('exit', exited)
      if (!('port' in message)) return fail(new Error('adversarial: unexpected first message'))
      done({
        port: message.port,
        child,
        cpu: () =>
          new Promise((answer) => {
            child.once('message', (reply: ServerMessage) => {
              if ('cpu' in reply) answer((reply.cpu.user + reply.cpu.system) / 1000)
            })
            child.send('cpu')
          }),
      })
    })
  })
}

/** One POST; resolves with the status and the milliseconds from sending to the response's end. */
function post(agent: Agent, port: number, body: Buffer, signature: string): Promise<{ status: number; ms: number }> {
  return new Promise((done, fail) => {
    const start = performance.now()
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        path: PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-service-hmac-signature': signature },
        timeout: 30_000,
      },
      (res) => {
        res.resume()
        res.on('end', () => done({ status: res.statusCode ?? 0, ms: performance.now() - start }))
        res.on('error', fail)
      },
    )
    req.on('timeout', () => req.destroy(new Error('adversarial: request timed out')))
    req.on('error', fail)
    req.end(body)
  })
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms))

async function underAttack(
  build: RefusalFigure['build'],
  coreUrl: string | undefined,
  bodies: readonly HostileBody[],
): Promise<UnderAttackResult> {
  const delivery = makePayload('gson', 1024, '1 KiB')
  const validBody = buffer(delivery.bytes)
  const validSignature = await sign(delivery.bytes, SECRET)
  const attacks = ATTACK_BODIES.map((id) => {
    const body = bodies.find((b) => b.id === id)
    if (!body) throw new Error(`adversarial: no body ${id}`)
    return { id, label: body.label, bytes: buffer(body.bytes) }
  })
  const server = await startServer(coreUrl)
  const validAgent = new Agent({ keepAlive: true, maxSockets: 1 })
  const hostileAgents = Array.from({ length: HOSTILE_CLIENTS }, () => new Agent({ keepAlive: true, maxSockets: 1 }))
  try {
    /** Paced valid deliveries for `seconds`; their latencies. */
    const deliver = async (seconds: number) => {
      const latencies: number[] = []
      const end = performance.now() + seconds * 1000
      while (performance.now() < end) {
        const sent = performance.now()
        const { status, ms } = await post(validAgent, server.port, validBody, validSignature)
        if (status !== 204) throw new Error(`adversarial: a valid delivery got ${status}`)
        latencies.push(ms)
        await sleep(Math.max(0, VALID_INTERVAL_MS - (performance.now() - sent)))
      }
      return latencies
    }
    /** Hostile clients, each sending `body` again as soon as it is refused, until the returned stop is called. */
    const attack = (body: Buffer) => {
      let running = true
      let refusals = 0
      const loops = hostileAgents.map(async (agent) => {
        while (running) {
          const { status } = await post(agent, server.port, body, BOGUS)
          // 401 is the refusal; a 413 would mean the body was never hashed and the figure meaningless.
          if (status !== 401) throw new Error(`adversarial: a hostile request got ${status}, not 401`)
          refusals++
        }
      })
      return async () => {
        running = false
        await Promise.all(loops)
        return refusals
      }
    }

    // Warm-up: every path compiled, connections open.
    for (const { bytes } of attacks) {
      const stop = attack(bytes)
      await deliver(quick ? 0.05 : 1)
      await stop()
    }

    type Phase = 'quiet' | (typeof ATTACK_BODIES)[number]
    const phases: Phase[] = ['quiet', ...ATTACK_BODIES]
    const latencies = new Map<Phase, number[]>(phases.map((p) => [p, []]))
    const cpuPerRefusal = new Map<Phase, number[]>(phases.map((p) => [p, []]))
    const refusals = new Map<Phase, number>(phases.map((p) => [p, 0]))
    let quietCpuPerValid = 0
    for (let round = 0; round < HTTP_ROUNDS; round++) {
      // Rotated every round, so drift on the machine does not land on one phase. The first round
      // starts quiet, so an attack's share of the CPU always has the latest quiet cost to subtract.
      const order = phases.map((_, i) => phases[(i + round) % phases.length] as Phase)
      for (const phase of order) {
        const cpuBefore = await server.cpu()
        const stop = phase === 'quiet' ? undefined : attack((attacks.find((a) => a.id === phase) as (typeof attacks)[number]).bytes)
        const valid = await deliver(PHASE_S)
        const count = stop ? await stop() : 0
        const cpu = (await server.cpu()) - cpuBefore
        latencies.get(phase)?.push(...valid)
        if (phase === 'quiet') quietCpuPerValid = cpu / valid.length
        else if (count > 0) {
          refusals.set(phase, (refusals.get(phase) ?? 0) + count)
          cpuPerRefusal.get(phase)?.push((cpu - valid.length * quietCpuPerValid) / count)
        }
      }
    }
    const figures = (values: number[]): LatencyFigures => ({
      medianMs: median(values),
      p99Ms: quantile(values, 0.99),
      requests: values.length,
    })
    const result: UnderAttackResult = {
      build,
      framework: HTTP_FRAMEWORK,
      hostileClients: HOSTILE_CLIENTS,
      validIntervalMs: VALID_INTERVAL_MS,
      phaseS: PHASE_S,
      rounds: HTTP_ROUNDS,
      quiet: figures(latencies.get('quiet') ?? []),
      attacks: attacks.map(({ id, label }) => ({
        body: id,
        label,
        ...figures(latencies.get(id) ?? []),
        refusalsPerSec: (refusals.get(id) ?? 0) / (HTTP_ROUNDS * PHASE_S),
        cpuMsPerRefusal: median(cpuPerRefusal.get(id) ?? []),
      })),
    }
    for (const a of result.attacks) {
      console.error(
        `adversarial: http (${build}), ${HOSTILE_CLIENTS} clients sending ${a.body}: valid deliveries median ${result.quiet.medianMs.toFixed(1)} -> ${a.medianMs.toFixed(1)} ms, ` +
          `p99 ${result.quiet.p99Ms.toFixed(1)} -> ${a.p99Ms.toFixed(1)} ms; ${a.refusalsPerSec.toFixed(0)} refusals/s, ${a.cpuMsPerRefusal.toFixed(2)} ms server CPU each`,
      )
    }
    return result
  } finally {
    for (const agent of [validAgent, ...hostileAgents]) agent.destroy()
    server.child.kill()
  }
}

// ---------------------------------------------------------------------------------------------

const x = (ratio: number) => `${ratio.toFixed(2)}×`

/** The comparison as Markdown, for notes.md: one column per build and setting. */
function compareTable(results: RefusalResult[]): string {
  const columns: { head: string; pick: (f: RefusalFigure) => boolean }[] = []
  for (const secrets of SECRET_COUNTS) {
    columns.push(
      { head: `before, ${secrets} secret${secrets > 1 ? 's' : ''}`, pick: (f) => f.build === 'before' && f.secrets === secrets },
      { head: `after, ${secrets}, default`, pick: (f) => f.build === 'after' && f.secrets === secrets && f.unicodeWhitespace === false },
      {
        head: `after, ${secrets}, unicodeWhitespace`,
        pick: (f) => f.build === 'after' && f.secrets === secrets && f.unicodeWhitespace === true,
      },
    )
  }
  const rows = results.map((r) => [
    r.label,
    `${(r.floorNs / 1e6).toFixed(2)} ms`,
    ...columns.map(({ pick }) => {
      const f = r.figures.find(pick)
      return f === undefined ? '–' : x(f.ratio)
    }),
  ])
  const head = ['body (1 MiB)', 'one HMAC', ...columns.map((c) => c.head)]
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n')
}

async function main() {
  if (!canCollect()) console.error('adversarial: start node with --expose-gc so each batch begins after a collection')
  const beforeUrl = comparePath === undefined ? undefined : pathToFileURL(resolve(comparePath)).href
  const before = beforeUrl === undefined ? undefined : ((await import(beforeUrl)) as { verifySignature: Verify }).verifySignature
  const bodies = hostileBodies()
  const results = await measureRefusals(bodies, before)
  const entryPoints = await measureEntryPoints()
  const units = await measureUnits()
  const http: UnderAttackResult[] = []
  if (withHttp) {
    if (beforeUrl !== undefined) http.push(await underAttack('before', beforeUrl, bodies))
    http.push(await underAttack('after', undefined, bodies))
  }
  if (before) {
    console.error(`\n${compareTable(results)}\n`)
    for (const h of http) {
      for (const a of h.attacks) {
        console.error(
          `HTTP (${h.build}), ${a.body}: median ${h.quiet.medianMs.toFixed(1)} / ${a.medianMs.toFixed(1)} ms, p99 ${h.quiet.p99Ms.toFixed(1)} / ${a.p99Ms.toFixed(1)} ms (quiet / under attack), ${a.cpuMsPerRefusal.toFixed(2)} ms CPU a refusal`,
        )
      }
    }
  }
  // Relative to the repository, so the record names no machine's folders.
  const core = relative(fileURLToPath(new URL('..', import.meta.url)), fileURLToPath(resolvedCore))
  const after = http.find((h) => h.build === 'after')
  const figures: AdversarialFigures = {
    runtime: `node ${process.version}`,
    core,
    size: SIZE,
    results,
    entryPoints,
    units,
    ...(after ? { http: after } : {}),
  }
  console.log(RESULT_PREFIX + JSON.stringify(before ? { ...figures, compared: http } : figures))
}

await main()
