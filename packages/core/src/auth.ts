import type { WebhookRequest } from './request.ts'

/** A value, or a function of the request that finds it (per-tenant lookups). */
export type Resolvable<T> = T | ((req: WebhookRequest) => T | Promise<T>)

export type WebhookAuth =
  | {
      mode: 'secret'
      /**
       * The signing secret; several while rotating (each is tried in turn); or a function of the
       * request that finds it (per tenant). A function that finds none (`undefined`, `null`, `''`,
       * `[]`: an unknown tenant) makes the request a 401 `invalid_signature`, not an error.
       */
      secret: string | readonly string[] | ((req: WebhookRequest) => SecretLookup | Promise<SecretLookup>)
      /**
       * Also accept a signature over the body with every Unicode whitespace removed, for a sender
       * that strips with JavaScript's or Python's `\s`. Default `false`: the service never signs
       * that form, and it lets a captured delivery be edited with invisible characters.
       */
      unicodeWhitespace?: boolean
    }
  | { mode: 'basic'; username: string; password: string; realm?: string }
  | {
      mode: 'basic'
      verify: (username: string, password: string, req: WebhookRequest) => boolean | Promise<boolean>
      realm?: string
    }
  | {
      mode: 'oauth2'
      appId: string
      secret: string
      /** Seconds a token lives; default 7200. */
      tokenTtl?: number
      /** Token signing keys: the first signs, all verify. Default: derived from `secret`. */
      tokenKeys?: readonly string[]
    }
  | { mode: 'none' }

export type WebhookMode = WebhookAuth['mode']

/** What a per-tenant secret lookup may find: a secret, several, or none for an unknown tenant. */
export type SecretLookup = string | readonly string[] | null | undefined
