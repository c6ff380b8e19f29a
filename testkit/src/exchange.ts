// What the HTTP helpers send and read back, shared by the socket client and the fetch client.

/** A request as a test writes it; sent the same way to an in-process app and a listening server. */
export interface Outgoing {
  method?: string
  /** Path and query. */
  path: string
  headers?: Record<string, string>
  /** Sent in one piece, with a Content-Length. */
  body?: string | Uint8Array
  /**
   * Sent chunked, with no Content-Length, one chunk at a time, stopping as soon as the answer
   * arrives (as a sender does when the receiver gives up early).
   */
  stream?: readonly Uint8Array[]
}

export interface Reply {
  status: number
  /** Lower-case names. */
  headers: Record<string, string>
  text: string
  /** For `stream`: whether every chunk had been sent when the answer came. */
  streamedAll?: boolean
}
