import type { WebhookOptions } from '@hookguard/core'
import type { App, AppFactory } from './apps.ts'

/**
 * Apps shared by the tests of one file that start the same adapter with the same options: starting
 * a framework and a server per test was most of these files' CPU. `view` turns a shared app into
 * what a test sees of it from the moment it takes it (its own count of handler runs, say), so that
 * no test reads what an earlier one left; `close` on a view does nothing, `closeAll` ends them all.
 */
export function sharedApps<A extends App>(start: (factory: AppFactory, options: WebhookOptions) => Promise<A>, view: (app: A) => A) {
  const started = new Map<string, Promise<A>>()
  const own: A[] = []
  return {
    async take(factory: AppFactory, options: WebhookOptions): Promise<A> {
      const key = shareKey(options)
      if (key === undefined) {
        // Options with state of their own: a server of its own, closed with the others.
        const app = await start(factory, options)
        own.push(app)
        return { ...view(app), close: async () => {} }
      }
      const id = `${factory.name}\n${key}`
      let app = started.get(id)
      if (app === undefined) {
        app = start(factory, options)
        started.set(id, app)
      }
      return { ...view(await app), close: async () => {} }
    },
    async closeAll(): Promise<void> {
      const apps = [...own, ...(await Promise.all(started.values()))]
      started.clear()
      own.length = 0
      await Promise.all(apps.map((app) => app.close()))
    },
  }
}

/** A test's view of `app`: the handler runs from now on. */
export function fromNow<A extends App>(app: A): A {
  const before = app.handled()
  return { ...app, handled: () => app.handled() - before }
}

const identities = new WeakMap<object, number>()
let nextIdentity = 0

/**
 * What makes two options the same app: equal plain data, and the very same functions and class
 * instances (a resolver, a schema, a store). Undefined for options whose app keeps what it has
 * seen (a dedupe store remembers every delivery): such a test starts from a fresh app.
 */
function shareKey(options: WebhookOptions): string | undefined {
  if (options.dedupe !== undefined) return undefined
  return JSON.stringify(options, (_key, value: unknown) => {
    if (typeof value === 'function' || (typeof value === 'object' && value !== null && !isPlain(value))) {
      let id = identities.get(value)
      if (id === undefined) {
        id = nextIdentity++
        identities.set(value, id)
      }
      return `#ref${id}`
    }
    return value
  })
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null || Array.isArray(value)
}
