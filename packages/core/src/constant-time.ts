/**
 * Compares two byte strings in time that depends only on the length of `expected`.
 *
 * Every security-sensitive comparison in hookguard (signatures, Basic credentials, OAuth client
 * secrets, token MACs) goes through this one function. Inputs of unequal length still walk all of
 * `expected`, so a wrong length is not answered faster than a wrong byte. Callers whose expected
 * value has a secret length (passwords, client secrets) hash both sides to 32 bytes first.
 */
export function timingSafeEqual(actual: Uint8Array, expected: Uint8Array): boolean {
  // Comparing `expected` with itself when the lengths differ keeps the loop's shape and
  // memory access identical to the equal-length case.
  // Stryker disable next-line ConditionalExpression: equivalent — unequal lengths already set diff; the choice keeps memory access uniform, not the verdict
  const other = actual.length === expected.length ? actual : expected
  let diff = actual.length ^ expected.length
  // Stryker disable next-line EqualityOperator: equivalent — one step past the end XORs undefined with undefined, which is 0
  for (let i = 0; i < expected.length; i++) {
    diff |= (other[i] as number) ^ (expected[i] as number)
  }
  return diff === 0
}
