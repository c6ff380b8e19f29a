// What the apps under test share, with no Node module: Bun, Deno and the workerd bundle load it too.

/**
 * What the handler after `webhook()` answers: the payload where the framework's users find it,
 * and the raw body, so a case can tell that the bytes arrived untouched.
 */
export interface Received {
  mode: string
  payload: unknown
  rawLength: number
  rawText: string
}

/**
 * How a refusal is answered. By default hookguard answers it itself (onError 'respond') and the
 * framework stays quiet. With `passOn`, every refusal goes to the framework's own error handling
 * instead (Express onError 'next', Koa and Hono 'throw'), left as it ships, logging included, so
 * that leak checks see what a real app would print; `passOn` sees each error that reaches it.
 */
export interface AppSettings {
  passOn?: (error: unknown) => void
  /**
   * The handler's own work, awaited before it answers: resolves the status it answers with (its
   * body is still the `Received`), or rejects, which the handler throws on in the framework's way.
   * Default: none, answered 200 at once.
   */
  work?: (received: Received) => Promise<number>
}

/** The status a handler answers with once `work` is done. */
export const workDone = async (work: AppSettings['work'], received: Received): Promise<number> =>
  work === undefined ? 200 : work(received)
