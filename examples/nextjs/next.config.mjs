// `dist`, not `.next`: ignored by git, Biome and the repository's typecheck like every other build.
export default { distDir: 'dist' }
