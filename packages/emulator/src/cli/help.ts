import { SAMPLE_EVENT_NAMES } from '../samples.ts'

const EVENTS = SAMPLE_EVENT_NAMES.join(', ')

export const TOP_HELP = `Usage: hookguard <command> [options]

Plays the marketing-data service on your machine: signs and delivers webhooks exactly as it
does, fetches OAuth 2.0 tokens as it does, and receives deliveries to show what a receiver accepts.

Commands:
  sign [file]         Print the signature the service would send for a body
  send <url>          Deliver a payload as the service does; print the answer
  listen              Receive deliveries on 127.0.0.1; print each one, verified or rejected
  token <token_url>   Fetch an access token as the service does; print the answer
  inspect             Record deliveries (in front of your app, or as the receiver) and
                      explain each verdict on a page on 127.0.0.1

Options:
  -h, --help          Show help; 'hookguard <command> --help' for a command's
  -v, --version       Print the version

Secrets not given as flags are read from HOOKGUARD_SECRET, HOOKGUARD_PASSWORD and
HOOKGUARD_APP_SECRET, which keeps them out of shell history. No secret is ever printed.

Exit codes: 0 done, 1 failed (refused, unreachable), 2 usage error.
`

export const SIGN_HELP = `Usage: hookguard sign [file] [--secret <secret>]

Prints the X-Service-Hmac-Signature value the service would send for the body, and nothing else:
the hex HMAC-SHA256 of the file's bytes with Java's whitespace removed. Reads standard input when
no file (or '-') is given.

Options:
  --secret <secret>   The signing secret (default: $HOOKGUARD_SECRET)
  -h, --help          Show this help

Examples:
  HOOKGUARD_SECRET=whsec-… hookguard sign payload.json
  printf '{"event":"ping"}' | hookguard sign
`

const CREDENTIALS = `  --mode secret     --secret <s> ($HOOKGUARD_SECRET) [--signature-header <name>]
  --mode basic      --username <u> --password <p> ($HOOKGUARD_PASSWORD)`

export const SEND_HELP = `Usage: hookguard send <url> --mode <mode> [credentials] [--file <path> | --event <name>]

Delivers one webhook to <url> exactly as the service does (POST, JSON, authenticated per mode)
and prints the receiver's status and body. Exits 0 on a 2xx answer, 1 otherwise.

Modes and their credentials:
${CREDENTIALS}
  --mode oauth2     --token-url <url> --appid <id> --app-secret <s> ($HOOKGUARD_APP_SECRET)
                    (GETs a token first, then sends it as the access_token query parameter)
  --mode none

Payload (default: --event customer.created):
  --file <path>     The file's bytes, sent as is; '-' reads standard input
  --event <name>    A sample event, serialised as the service's Gson does: ${EVENTS}

Options:
  -i, --include     Also print the answer's headers
  -h, --help        Show this help

Examples (secrets from the environment, not the command line, so they stay out of shell history):
  HOOKGUARD_SECRET=whsec-… hookguard send http://127.0.0.1:3000/webhooks --mode secret --event order.paid
  HOOKGUARD_PASSWORD=… hookguard send http://127.0.0.1:3000/webhooks --mode basic --username hook-user --file payload.json
`

export const LISTEN_HELP = `Usage: hookguard listen --mode <mode> [--port <n>] [credentials]

Receives deliveries on http://127.0.0.1:<port>/ (any path) through @hookguard/hono, with the
settings a receiver would have, and prints one line per delivery: verified, with its event, or
rejected, with the error code the receiver answered. In mode oauth2 the token acquisition
address is /token. Runs until Ctrl-C.

Modes and their credentials:
${CREDENTIALS}
  --mode oauth2     --appid <id> --app-secret <s> ($HOOKGUARD_APP_SECRET)
  --mode none

Options:
  --port <n>        Port on 127.0.0.1 (default: 3000; 0 picks a free one)
  -h, --help        Show this help

Example:
  HOOKGUARD_SECRET=whsec-… hookguard listen --mode secret --port 3000
`

export const TOKEN_HELP = `Usage: hookguard token <token_url> --appid <id> --app-secret <secret>

Fetches an access token the way the service does before an OAuth 2.0 delivery,
GET <token_url>?appid=…&secret=…&grant_type=client_credentials, and prints the JSON answer.
Exits 1 when the address refuses or answers without an access_token.

Options:
  --appid <id>            The app id
  --app-secret <secret>   The app secret (default: $HOOKGUARD_APP_SECRET)
  -h, --help              Show this help

Example:
  HOOKGUARD_APP_SECRET=… hookguard token http://127.0.0.1:3000/token --appid app-1
`

export const INSPECT_HELP = `Usage: hookguard inspect [--mode <mode>] [--forward-to <url>] [--port <n>] [--ui-port <n>]
                         [--save <file>] [--json] [--host <host>] [credentials]

Receives deliveries on http://127.0.0.1:<port>/ and records each one's exact bytes. With
--forward-to it stands in front of your app: each request goes on unchanged, the app's answer
comes back, and hookguard's own verdict (with the same settings) is recorded beside it, flagged
when the two disagree. Without it, it answers as hookguard would. A page on
http://127.0.0.1:<ui-port>/ shows every delivery live: headers, bytes, the text the signature
covers, why a signature failed, replay, edit and resend, forged presets, exports, diff.

Modes (default: secret) and their credentials, from the environment so that they stay out
of shell history:
  --mode secret     $HOOKGUARD_SECRET (several, comma-separated, while rotating)
                    [--signature-header <name>]
  --mode basic      --username <u> ($HOOKGUARD_USERNAME), $HOOKGUARD_PASSWORD
  --mode oauth2     --appid <id> ($HOOKGUARD_APPID), $HOOKGUARD_APP_SECRET; token address /token
  --mode none

Options:
  --forward-to <url>  Your app (http://localhost:3000); the request's path and query are appended
  --port <n>          Receiving port (default: 8787; 0 picks a free one)
  --ui-port <n>       The page's port (default: 4040; 0 picks a free one)
  --save <file>       Keep records in an NDJSON file, reloaded on the next start
  --json              One JSON object a line on stdout: ready, then each delivery and token request
  --host <host>       Listen elsewhere than 127.0.0.1 (warned: it exposes what is recorded)
  --max-connections <n>      Connections served at once (default: 128); past it, 503
  --max-in-flight-bytes <n>  Bytes of bodies held at once (default: 33554432, 32 MiB); past it, 503
  -h, --help          Show this help

The page needs the access token printed with its address (one per run). Runs until Ctrl-C.

Example:
  HOOKGUARD_SECRET=whsec-… hookguard inspect --mode secret --forward-to http://localhost:3000
`
