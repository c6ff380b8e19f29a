/**
 * The conformance table builds Basic headers with `Buffer.from(text, 'utf8').toString('base64')`
 * while it loads. In the bundles only the table gets this stand-in (see `bundle.ts`): the
 * packages under test must still find no `Buffer` in a Worker.
 */
export const Buffer = {
  from(text: string, encoding: 'utf8') {
    if (encoding !== 'utf8') throw new TypeError(`shims/buffer.ts: only utf8 text, not ${encoding}`)
    const bytes = new TextEncoder().encode(text)
    return { toString: (to: 'base64') => (to === 'base64' ? btoa(String.fromCharCode(...bytes)) : new TextDecoder().decode(bytes)) }
  },
}
