import type { WebhookMode } from './auth.ts'

/**
 * A verified delivery, as the handler after the middleware sees it. `RawBody` is what the bytes
 * are where it runs: a `Buffer` in the Node adapters (Express, Koa), a `Uint8Array` elsewhere.
 */
export interface WebhookDelivery<Payload = unknown, RawBody extends Uint8Array = Uint8Array> {
  mode: WebhookMode
  /** The parsed JSON body (the form's fields, for a token sent as a form field); the schema's output with `schema`. */
  payload: Payload
  /** The bytes received. */
  rawBody: RawBody
  /**
   * SHA-256 (hex) of what the mode authenticates. Mode `secret`: the text the signature covers, the
   * body with Java's whitespace removed (or the compatibility form that matched), the same for
   * every whitespace variant of one delivery. Modes `basic`, `oauth2` and `none`, where nothing is
   * signed: the bytes received (whitespace inside strings is content), without the `access_token`
   * field of a form. A key for a unique constraint of your own: the service sends no delivery id.
   * A getter, hashed when first read: a spread or `JSON.stringify` of the delivery leaves it out.
   */
  readonly fingerprint: string
}
