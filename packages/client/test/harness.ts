import { type MockService, type MockServiceOptions, mockService } from '@hookguard/emulator'
import { afterEach, beforeEach } from 'vitest'
import { type Client, type ClientOptions, createClient } from '../src/index.ts'

export const APP_ID = 'app-42'
// Non-ASCII on purpose: the Basic header must be base64 of the UTF-8 bytes.
export const APP_SECRET = 'sëcret-密钥:with-colon'
export const START = Date.parse('2030-01-01T00:00:00Z')
export const PLUS_MOBILE = '+8613800138000'
export const TOKEN_PATH = '/v2/oauth2/token'
export const CUSTOMERS_PATH = '/v2/customers'

/** The injected clock both the emulator and the client read: tests move time, nothing sleeps. */
export interface TestClock {
  now: number
  /** Moves to `seconds` after START. */
  at(seconds: number): void
}

/**
 * Starts emulators on 127.0.0.1 port 0 and closes them after each test; the client and the
 * emulator share one clock.
 */
export function useService() {
  const started: MockService[] = []
  const clock: TestClock = {
    now: START,
    at(seconds) {
      this.now = START + seconds * 1000
    },
  }
  beforeEach(() => {
    clock.now = START
  })
  afterEach(async () => {
    await Promise.all(started.splice(0).map((service) => service.close()))
  })
  return {
    clock,
    async start(options: Partial<MockServiceOptions> = {}): Promise<MockService> {
      const service = await mockService({ appId: APP_ID, appSecret: APP_SECRET, clock: () => clock.now, ...options })
      started.push(service)
      return service
    },
    client(service: MockService, options: Partial<ClientOptions> = {}): Client {
      return createClient({ baseUrl: service.url, appId: APP_ID, appSecret: APP_SECRET, clock: () => clock.now, ...options })
    },
  }
}

export function tokenRequests(service: MockService) {
  return service.requests.filter((r) => r.path === TOKEN_PATH)
}

export function customerRequests(service: MockService) {
  return service.requests.filter((r) => r.path === CUSTOMERS_PATH)
}

/** The bearer token each request to `path` carried, in order. */
export function bearers(service: MockService, path = CUSTOMERS_PATH): (string | undefined)[] {
  return service.requests.filter((r) => r.path === path).map((r) => r.headers.authorization?.replace(/^Bearer /, ''))
}

export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
}
