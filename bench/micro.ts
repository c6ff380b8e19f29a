/**
 * Targets 1 and 3: `verifySignature` (Node build) against the bare HMAC and against the peers'
 * verifiers, same bytes, same run. Start it through run.ts, or alone:
 * `node --expose-gc --import tsx bench/micro.ts [--quick]`.
 */
import { createHmac, createSecretKey, randomBytes } from 'node:crypto'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sign as hookguardSign, verifySignature } from '@hookguard/core'
import { allPayloads } from '@hookguard/testkit/payload'
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { Webhook as SvixWebhook } from 'svix'
import { type Candidate, canCollect, measure, RESULT_PREFIX } from './measure.ts'

const SECRET = 'hookguard-bench-secret-7d1e4c2b9a'
// Standard Webhooks and Svix take a base64 key behind `whsec_`; Stripe's secrets carry the same
// prefix but are used as text.
const WHSEC = `whsec_${randomBytes(24).toString('base64')}`
const STRIPE_SECRET = 'whsec_hookguard_bench_0123456789abcdef'

const quick = process.argv.includes('--quick')

const resolvedCore = import.meta.resolve('@hookguard/core')
// The target is the Node build as users install it; the source condition would measure tsx's
// on-the-fly transform of src instead.
if (!resolvedCore.includes('/dist/node/')) {
  throw new Error(`@hookguard/core resolved to ${resolvedCore}, not the Node build; run without --conditions=@hookguard/source`)
}

const buffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
const nowSeconds = () => Math.floor(Date.now() / 1000)
const stripe = new Stripe('sk_test_hookguard_bench')
const stripeSignature = stripe.webhooks.signature
if (!stripeSignature) throw new Error('micro: stripe has no signature helper')
const floorKey = createSecretKey(Buffer.from(SECRET))

export const candidates: Candidate[] = [
  {
    // The floor: one HMAC over the raw bytes, key imported once.
    name: 'floor',
    async prepare({ bytes }) {
      const body = buffer(bytes)
      return { async: false, call: () => createHmac('sha256', floorKey).update(body).digest('hex') }
    },
  },
  {
    name: 'hookguard',
    async prepare({ bytes }) {
      const body = buffer(bytes)
      const header = await hookguardSign(body, SECRET)
      return { async: true, call: () => verifySignature(body, header, SECRET) }
    },
  },
  {
    name: 'octokit',
    async prepare({ bytes, text }) {
      const body = buffer(bytes)
      const header = await octokitSign(SECRET, text)
      // It accepts only a string, so decoding the received bytes is part of using it.
      return { async: true, call: () => octokitVerify(SECRET, body.toString('utf8'), header) }
    },
  },
  {
    name: 'stripe',
    async prepare({ bytes, text }) {
      const body = buffer(bytes)
      const header = stripe.webhooks.generateTestHeaderString({ payload: text, secret: STRIPE_SECRET, timestamp: nowSeconds() })
      return { async: false, call: () => stripeSignature.verifyHeader(body, header, STRIPE_SECRET, 300) }
    },
  },
  {
    name: 'standardwebhooks',
    async prepare({ bytes, text }) {
      const body = buffer(bytes)
      const wh = new StandardWebhook(WHSEC)
      const id = 'msg_2bNwAcMqTz0cQxMQ6YJ1xoRJYwA'
      const timestamp = new Date()
      const headers = { 'webhook-id': id, 'webhook-timestamp': String(nowSeconds()), 'webhook-signature': wh.sign(id, timestamp, text) }
      // `jsonParse: false` leaves parsing out, as our verifier does; it throws on a mismatch.
      return {
        async: false,
        call: () => {
          wh.verify(body, headers, { jsonParse: false })
          return true
        },
      }
    },
  },
  {
    name: 'svix',
    async prepare({ bytes, text }) {
      const body = buffer(bytes)
      const wh = new SvixWebhook(WHSEC)
      const id = 'msg_2bNwAcMqTz0cQxMQ6YJ1xoRJYwA'
      const headers = { 'svix-id': id, 'svix-timestamp': String(nowSeconds()), 'svix-signature': wh.sign(id, new Date(), text) }
      // Svix's verify always parses the payload (it returns it); it has no option to skip that.
      return { async: false, call: () => wh.verify(body, headers) !== undefined }
    },
  },
]

async function main() {
  if (!canCollect()) console.error('micro: start node with --expose-gc so each batch begins after a collection')
  const payloads = allPayloads()
  const results = await measure(payloads, candidates, {
    rounds: quick ? 3 : 15,
    batchMs: quick ? 3 : 25,
    warmupMs: quick ? 20 : 250,
    floor: 'floor',
    log: (line) => console.error(`micro: ${line}`),
  })
  // Relative to the repository, so the record names no machine's folders.
  const core = relative(fileURLToPath(new URL('..', import.meta.url)), fileURLToPath(resolvedCore))
  console.log(RESULT_PREFIX + JSON.stringify({ runtime: `node ${process.version}`, core, results }))
}

await main()
