import { helpText } from '@hookguard/inspect/cli'
import { SAMPLE_EVENT_NAMES } from '../samples.ts'
import { LISTEN_OPTIONS } from './commands/listen.ts'

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
  -h, --help          Show this help; 'hookguard <command> --help' shows a command's own
  -v, --version       Print the version

Credentials not given as flags are read from HOOKGUARD_SECRET, HOOKGUARD_USERNAME,
HOOKGUARD_PASSWORD, HOOKGUARD_APPID and HOOKGUARD_APP_SECRET, by every command alike, which keeps
them out of shell history. No secret is ever printed.

Exit codes: 0 done, 1 failed (refused, unreachable), 2 usage error.
`

export const SIGN_HELP = `Usage: hookguard sign [file] [--secret <secret>]

Prints the X-Service-Hmac-Signature value the service would send for the body, and nothing else:
the hex HMAC-SHA256 of the file's bytes with Java's whitespace removed. Reads standard input when
no file (or '-') is given.

Options:
  --secret <secret>   The signing secret (default: $HOOKGUARD_SECRET); several, comma-separated,
                      while rotating: signs with the first. Each entry is 8 characters or more
                      (spaces around it dropped): a secret holding a comma cannot be given as a list
  -h, --help          Show this help

Examples:
  HOOKGUARD_SECRET=whsec-… hookguard sign payload.json
  printf '{"event":"ping"}' | hookguard sign
`

export const SEND_HELP = `Usage: hookguard send <url> --mode <mode> [credentials] [--file <path> | --event <name>]

Delivers one webhook to <url> exactly as the service does (POST, JSON, authenticated per mode)
and prints the receiver's status and body: a JSON body whole, any other (an HTML error page) by
its content type and first 10 lines (2 KB at most); credentials an answer echoes are shown as
[redacted]. Exits 0 on a 2xx answer, 1 otherwise, and on no answer within --timeout.

Modes and their credentials:
  --mode secret     --secret <s> ($HOOKGUARD_SECRET) [--signature-header <name>]
                    (several, comma-separated, while rotating: signs with the first; each 8
                    characters or more: a secret holding a comma cannot be given as a list)
  --mode basic      --username <u> ($HOOKGUARD_USERNAME) --password <p> ($HOOKGUARD_PASSWORD)
  --mode oauth2     --token-url <url> --appid <id> ($HOOKGUARD_APPID)
                    --app-secret <s> ($HOOKGUARD_APP_SECRET)
                    (GETs a token first, then sends it as the access_token query parameter)
  --mode none

Payload (default: --event customer.created):
  --file <path>     The file's bytes, sent as is; '-' reads standard input
  --event <name>    A sample event, serialised as the service's Gson does: ${EVENTS}

Options:
  -i, --include     Also print the answer's headers
  --timeout <s>     Seconds to wait for the token and the answer (default 30)
  -h, --help        Show this help

Examples (secrets from the environment, not the command line, so they stay out of shell history):
  HOOKGUARD_SECRET=whsec-… hookguard send http://127.0.0.1:3000/webhooks --mode secret --event order.paid
  HOOKGUARD_PASSWORD=… hookguard send http://127.0.0.1:3000/webhooks --mode basic --username hook-user --file payload.json
`

export const LISTEN_HELP = helpText({
  usage: 'hookguard listen --mode <mode> [--port <n>] [credentials]',
  about: `Receives deliveries on http://127.0.0.1:<port>/ (any path) through @hookguard/hono, with the
settings a receiver would have, and prints one line per delivery: verified, with its event, or
rejected, with the error code the receiver answered. In mode oauth2 it also serves the token
acquisition address. Runs until Ctrl-C. Its options mean what they mean for 'hookguard inspect'.`,
  options: LISTEN_OPTIONS,
  footer: `Credentials are best given in the environment, where they stay out of shell history and the
process list.

Example:
  HOOKGUARD_SECRET=whsec-… hookguard listen --mode secret --port 3000
`,
})

export const TOKEN_HELP = `Usage: hookguard token <token_url> --appid <id> --app-secret <secret>

Fetches an access token the way the service does before an OAuth 2.0 delivery,
GET <token_url>?appid=…&secret=…&grant_type=client_credentials, and prints the JSON answer.
Exits 1 when the address refuses or answers without an access_token.

Options:
  --appid <id>            The app id (default: $HOOKGUARD_APPID)
  --app-secret <secret>   The app secret (default: $HOOKGUARD_APP_SECRET)
  -h, --help              Show this help

Example:
  HOOKGUARD_APP_SECRET=… hookguard token http://127.0.0.1:3000/token --appid app-1
`

export { INSPECT_HELP } from '@hookguard/inspect/cli'
