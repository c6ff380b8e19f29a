// `dist`, not `.next`: ignored by git, Biome and the repository's typecheck like every other build.
// `next dev` logs each request's URL with its query, where the token address gets the app secret
// and the webhook address the access token (mode oauth2): those routes stay out of its log, as
// docs/frameworks/fetch.md tells users.
export default {
  distDir: 'dist',
  logging: { incomingRequests: { ignore: [/^\/webhooks(?:[/?]|$)/] } },
}
