/** What a bundler makes of a `.wasm?module` import: a compiled module, where it follows the edge convention. */
declare module '*.wasm?module' {
  const compiled: unknown
  export default compiled
}
