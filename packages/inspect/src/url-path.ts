/**
 * The path alone, for log lines and the page's composer: a query may carry a token. Apart from
 * redact.ts, which needs Node's crypto, so that the page's bundle can use it too.
 */
export function pathOnly(url: string): string {
  const at = url.search(/[?#]/)
  return at < 0 ? url : url.slice(0, at)
}
