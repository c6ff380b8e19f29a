/**
 * What the conformance table takes from vitest, for the bundles that carry the table where vitest
 * cannot go (a Worker, the Web build): `expect.stringMatching`, as an asymmetric matcher that
 * `suite/reply.ts` compares the way vitest does.
 */
export const expect = {
  stringMatching(pattern: RegExp | string) {
    return {
      asymmetricMatch: (actual: unknown) => typeof actual === 'string' && new RegExp(pattern).test(actual),
      toString: () => `StringMatching ${String(pattern)}`,
    }
  },
}
