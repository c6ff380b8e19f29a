import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WebhookOptions } from '@hookguard/core'
import { tokenEndpoint, webhook } from '@hookguard/express'
import express from 'express'
import * as oauth from 'oauth4webapi'
import * as openid from 'openid-client'
import { ClientCredentials } from 'simple-oauth2'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Well-kept OAuth 2.0 client libraries, used as their users use them, against a real token
// acquisition address on loopback: each must obtain a token that webhook() then accepts, and
// must see a wrong secret as invalid_client.

const APP_ID = 'wx-app-1042'
// Characters that RFC 6749 §2.3.1's form-urlencoding before base64 changes, so a client or server
// that skips that step fails here; all within the printable ASCII of Appendix A.2.
const SECRET = 'oauth-secret:4f1d+9a %/&='
const OPTIONS: WebhookOptions = { auth: { mode: 'oauth2', appId: APP_ID, secret: SECRET } }
const WRONG_SECRET = 'oauth-secret:guess'
const EVENT = { event: 'customer.created', data: { id: 884211 } }
const CHALLENGE = { scheme: 'basic', parameters: { realm: 'token', charset: 'UTF-8' } }

let server: http.Server
let baseUrl: string

beforeAll(async () => {
  const app = express()
  app.all('/token', tokenEndpoint(OPTIONS))
  app.post('/hooks', webhook(OPTIONS), (req, res) => {
    res.json({ payload: req.webhook?.payload })
  })
  server = http.createServer(app)
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  server.close()
  await once(server, 'close')
})

/** What the service does with the token: POST a JSON delivery with `Authorization: Bearer`. */
async function deliverWith(accessToken: string): Promise<{ status: number; payload: unknown }> {
  const res = await fetch(`${baseUrl}/hooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(EVENT),
  })
  return { status: res.status, payload: ((await res.json()) as { payload?: unknown }).payload }
}

async function expectAccepted(accessToken: string): Promise<void> {
  expect(await deliverWith(accessToken)).toEqual({ status: 200, payload: EVENT })
}

/** A refusal that oauth4webapi and openid-client report as the 401's challenge (RFC 7235 §3.1), with the body still to read. */
async function expectChallenged(error: unknown): Promise<void> {
  expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
  const challenged = error as oauth.WWWAuthenticateChallengeError
  expect(challenged.status).toBe(401)
  expect(challenged.cause).toEqual([CHALLENGE])
  expect(await challenged.response.json()).toEqual({
    error: 'invalid_client',
    error_description: expect.any(String),
    message: expect.any(String),
  })
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the token request to be refused')
    },
    (error: unknown) => error,
  )
}

describe('the token acquisition address, with OAuth 2.0 client libraries', () => {
  describe('oauth4webapi', () => {
    const as = (): oauth.AuthorizationServer => ({ issuer: baseUrl, token_endpoint: `${baseUrl}/token` })
    const client: oauth.Client = { client_id: APP_ID }
    // Plain http is refused unless asked for; loopback only here.
    const insecure = { [oauth.allowInsecureRequests]: true }

    async function obtain(auth: oauth.ClientAuth): Promise<string> {
      const response = await oauth.clientCredentialsGrantRequest(as(), client, auth, new URLSearchParams(), insecure)
      return (await oauth.processClientCredentialsResponse(as(), client, response)).access_token
    }

    it('obtains a token with client_secret_basic, which webhook() accepts', async () => {
      await expectAccepted(await obtain(oauth.ClientSecretBasic(SECRET)))
    })

    it('obtains a token with client_secret_post, which webhook() accepts', async () => {
      await expectAccepted(await obtain(oauth.ClientSecretPost(SECRET)))
    })

    it('is refused with invalid_client and a Basic challenge for a wrong secret, by either method', async () => {
      await expectChallenged(await rejection(obtain(oauth.ClientSecretBasic(WRONG_SECRET))))
      await expectChallenged(await rejection(obtain(oauth.ClientSecretPost(WRONG_SECRET))))
    })

    it('reads a refusal without a challenge as a response body error, with error_description', async () => {
      const response = await oauth.clientCredentialsGrantRequest(
        as(),
        client,
        oauth.ClientSecretBasic(SECRET),
        // The service's fields beside Basic: two ways of authenticating at once (RFC 6749 §2.3).
        { appid: APP_ID, secret: SECRET },
        insecure,
      )
      const error = await rejection(oauth.processClientCredentialsResponse(as(), client, response))
      expect(error).toBeInstanceOf(oauth.ResponseBodyError)
      expect(error).toMatchObject({ status: 400, error: 'invalid_request', error_description: expect.any(String) })
    })
  })

  describe('openid-client', () => {
    // Built from the server's metadata, not discovered: the address publishes no discovery document.
    function configuration(auth: openid.ClientAuth): openid.Configuration {
      const config = new openid.Configuration({ issuer: baseUrl, token_endpoint: `${baseUrl}/token` }, APP_ID, undefined, auth)
      openid.allowInsecureRequests(config)
      return config
    }

    it('obtains a token with client_secret_basic, which webhook() accepts', async () => {
      const tokens = await openid.clientCredentialsGrant(configuration(openid.ClientSecretBasic(SECRET)))
      expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 7200 })
      await expectAccepted(tokens.access_token)
    })

    it('obtains a token with client_secret_post, which webhook() accepts', async () => {
      const tokens = await openid.clientCredentialsGrant(configuration(openid.ClientSecretPost(SECRET)))
      await expectAccepted(tokens.access_token)
    })

    it('is refused with invalid_client and a Basic challenge for a wrong secret, by either method', async () => {
      for (const auth of [openid.ClientSecretBasic(WRONG_SECRET), openid.ClientSecretPost(WRONG_SECRET)]) {
        await expectChallenged(await rejection(openid.clientCredentialsGrant(configuration(auth))))
      }
    })
  })

  describe('simple-oauth2', () => {
    type AuthorizationMethod = 'header' | 'body'
    const clientCredentials = (authorizationMethod: AuthorizationMethod, secret = SECRET, idParamName?: string) =>
      new ClientCredentials({
        client: { id: APP_ID, secret, ...(idParamName === undefined ? {} : { idParamName, secretParamName: 'secret' }) },
        auth: { tokenHost: baseUrl, tokenPath: '/token' },
        options: { authorizationMethod },
      })

    for (const [method, label] of [
      ['header', 'client_secret_basic'],
      ['body', 'client_secret_post'],
    ] as const) {
      it(`obtains a token with authorizationMethod '${method}' (${label}), which webhook() accepts`, async () => {
        const { token } = await clientCredentials(method).getToken({})
        expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 7200 })
        await expectAccepted(token.access_token as string)
      })

      it(`is refused with 401 invalid_client and a Basic challenge for a wrong secret with authorizationMethod '${method}'`, async () => {
        const error = await rejection(clientCredentials(method, WRONG_SECRET).getToken({}))
        // @hapi/wreck's error for a 4xx answer: a Boom error holding the parsed JSON body.
        expect(error).toMatchObject({
          output: { statusCode: 401 },
          data: { payload: { error: 'invalid_client', error_description: expect.any(String), message: expect.any(String) } },
        })
        expect((error as { data: { headers: Record<string, string> } }).data.headers['www-authenticate']).toBe(
          'Basic realm="token", charset="UTF-8"',
        )
      })
    }

    it("obtains a token with the service's own field names, appid and secret, in a form POST", async () => {
      const { token } = await clientCredentials('body', SECRET, 'appid').getToken({})
      await expectAccepted(token.access_token as string)
    })
  })
})
