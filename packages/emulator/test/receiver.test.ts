import { afterEach, describe, expect, it } from 'vitest'
import { deliver } from '../src/deliver.ts'
import type { EmulatorError } from '../src/errors.ts'
import { sampleEvent } from '../src/samples.ts'
import { closeServers, receiverServer, rejection } from './helpers.ts'

afterEach(closeServers)

const SECRET = 'whsec-demo-7c2e91'

// The emulator is only useful if what it sends is what the core accepts, and what it sends
// wrongly is what the core refuses.
describe("deliveries as @hookguard/core's createReceiver sees them", () => {
  describe("mode 'secret'", () => {
    it('are verified, and the payload arrives intact', async () => {
      const receiver = await receiverServer({ auth: { mode: 'secret', secret: SECRET } })
      const answer = await deliver({ url: `${receiver.url}/hooks`, mode: 'secret', secret: SECRET, payload: sampleEvent('link.clicked') })
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body).payload).toEqual(sampleEvent('link.clicked'))
    })

    it('are verified with a signature header of their own when both sides name it', async () => {
      const receiver = await receiverServer({ auth: { mode: 'secret', secret: SECRET }, signatureHeader: 'X-Signature' })
      const answer = await deliver({
        url: receiver.url,
        mode: 'secret',
        secret: SECRET,
        signatureHeader: 'X-Signature',
        payload: sampleEvent(),
      })
      expect(answer.status).toBe(200)
    })

    it('are refused with invalid_signature when signed with another secret', async () => {
      const receiver = await receiverServer({ auth: { mode: 'secret', secret: SECRET } })
      const answer = await deliver({ url: receiver.url, mode: 'secret', secret: 'whsec-other', payload: sampleEvent() })
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body).error).toBe('invalid_signature')
    })
  })

  describe("mode 'basic'", () => {
    it('are verified with the right username and password, CJK ones included', async () => {
      const receiver = await receiverServer({ auth: { mode: 'basic', username: '用户', password: '密码:含冒号' } })
      const answer = await deliver({
        url: receiver.url,
        mode: 'basic',
        username: '用户',
        password: '密码:含冒号',
        payload: sampleEvent('order.paid'),
      })
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body).payload).toEqual(sampleEvent('order.paid'))
    })

    it('are refused with invalid_credentials and a challenge for a wrong password', async () => {
      const receiver = await receiverServer({ auth: { mode: 'basic', username: 'hook-user', password: 'right' } })
      const answer = await deliver({ url: receiver.url, mode: 'basic', username: 'hook-user', password: 'wrong', payload: sampleEvent() })
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body).error).toBe('invalid_credentials')
      expect(answer.headers['www-authenticate']).toMatch(/^Basic realm=/)
    })
  })

  describe("mode 'oauth2'", () => {
    const auth = { mode: 'oauth2', appId: 'app-1', secret: 'app-secret-9f1d' } as const

    it("are verified with a token from the receiver's own token address", async () => {
      const receiver = await receiverServer({ auth })
      const answer = await deliver({
        url: `${receiver.url}/hooks`,
        mode: 'oauth2',
        tokenUrl: `${receiver.url}/token`,
        appId: auth.appId,
        appSecret: auth.secret,
        payload: sampleEvent(),
      })
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body).payload).toEqual(sampleEvent())
    })

    it('are verified by a second receiver configured alike, since tokens are stateless', async () => {
      const issuer = await receiverServer({ auth })
      const other = await receiverServer({ auth })
      const answer = await deliver({
        url: other.url,
        mode: 'oauth2',
        tokenUrl: `${issuer.url}/token`,
        appId: auth.appId,
        appSecret: auth.secret,
        payload: '{}',
      })
      expect(answer.status).toBe(200)
    })

    it('are refused with invalid_token when the token comes from a receiver with another secret', async () => {
      const issuer = await receiverServer({ auth: { ...auth, secret: 'another-secret' } })
      const receiver = await receiverServer({ auth })
      const answer = await deliver({
        url: receiver.url,
        mode: 'oauth2',
        tokenUrl: `${issuer.url}/token`,
        appId: auth.appId,
        appSecret: 'another-secret',
        payload: '{}',
      })
      expect(answer.status).toBe(401)
      expect(JSON.parse(answer.body).error).toBe('invalid_token')
    })

    it('never get sent when the token address refuses the app secret (invalid_client)', async () => {
      const receiver = await receiverServer({ auth })
      const error = await rejection<EmulatorError>(
        deliver({
          url: receiver.url,
          mode: 'oauth2',
          tokenUrl: `${receiver.url}/token`,
          appId: auth.appId,
          appSecret: 'wrong-secret',
          payload: '{}',
        }),
      )
      expect(error).toMatchObject({ code: 'token_request_failed', status: 401 })
      expect(error.message).toMatch(/answered 401 \(invalid_client\)$/)
      expect(receiver.requests.map((r) => r.method)).toEqual(['GET'])
    })
  })

  describe("mode 'none'", () => {
    it('are accepted, and a body that is not JSON is refused with invalid_json', async () => {
      const receiver = await receiverServer({ auth: { mode: 'none' } })
      expect((await deliver({ url: receiver.url, mode: 'none', payload: sampleEvent() })).status).toBe(200)
      const broken = await deliver({ url: receiver.url, mode: 'none', payload: '{"event":' })
      expect(broken.status).toBe(400)
      expect(JSON.parse(broken.body).error).toBe('invalid_json')
    })
  })
})
