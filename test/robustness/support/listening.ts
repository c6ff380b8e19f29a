import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { WebhookEvent, WebhookOptions } from '@hookguard/core'
import type { App, AppFactory, AppSettings } from '../../support/apps.ts'

/** An app from one of the shared factories, with the port it listens on (none for an app served in process). */
export interface Served extends App {
  port: number | undefined
}

/**
 * Runs `start` and learns the port of the server it creates, for the cases that need a socket of
 * their own (raw bytes, a lying Content-Length, a client that walks away). The shared factories
 * keep the port inside their client, so `http.createServer` is observed while the app starts; one
 * start is observed at a time, so that tests running side by side (`describe.concurrent`) each
 * learn their own server's port.
 */
export function observePort<T>(start: () => Promise<T>): Promise<{ value: T; port: number | undefined }> {
  const observed = observing.then(() => observeAlone(start))
  observing = observed.catch(() => {})
  return observed
}

let observing: Promise<unknown> = Promise.resolve()

async function observeAlone<T>(start: () => Promise<T>): Promise<{ value: T; port: number | undefined }> {
  const created: http.Server[] = []
  const createServer = http.createServer
  http.createServer = ((...args: Parameters<typeof http.createServer>) => {
    const server = createServer(...args)
    created.push(server)
    return server
  }) as typeof http.createServer
  let value: T
  try {
    value = await start()
  } finally {
    http.createServer = createServer
  }
  const [server] = created
  return { value, port: server === undefined ? undefined : (server.address() as AddressInfo).port }
}

/** Starts `factory`'s app, with its port (none for an app served in process). */
export async function startServed(factory: AppFactory, options: WebhookOptions, settings?: AppSettings): Promise<Served> {
  const { value: app, port } = await observePort(() => factory.start(options, settings))
  return { ...app, port }
}

/** An app whose refusals go to the framework's own error handling (`AppSettings.passOn`). */
export interface PassingApp extends Served {
  /** The errors the framework's error handling received, in order. */
  passedOn(): unknown[]
  /** What the receiver's `onEvent` was told, in order. */
  events(): WebhookEvent[]
}

/** Starts `factory`'s app with refusals passed on to the framework, recording each one and every event. */
export async function startPassing(factory: AppFactory, options: WebhookOptions): Promise<PassingApp> {
  const passedOn: unknown[] = []
  const events: WebhookEvent[] = []
  const recorded = { ...options, onEvent: (event: WebhookEvent) => events.push(event) }
  const app = await startServed(factory, recorded, { passOn: (error) => passedOn.push(error) })
  return { ...app, passedOn: () => passedOn, events: () => events }
}
