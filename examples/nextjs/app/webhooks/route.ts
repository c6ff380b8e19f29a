// A Next.js App Router route handler for the message receiving address: POST /webhooks.
// Run, after `pnpm build`: WEBHOOK_SECRET=… pnpm --filter examples nextjs:build, then the same with `nextjs`.
import { webhook } from '@hookguard/fetch'

interface RouteContext {
  params: Promise<Record<string, never>>
}

// `next build` loads this module to collect the route's configuration, so WEBHOOK_SECRET must be
// set when building too: an unset secret fails the build (TypeError), not a delivery.
export const POST = webhook(
  { auth: { mode: 'secret', secret: process.env.WEBHOOK_SECRET ?? '' } },
  (delivery, _request, _context: RouteContext) => {
    console.log('verified delivery:', delivery.payload)
    return Response.json({ mode: delivery.mode, payload: delivery.payload, bytes: delivery.rawBody.byteLength })
  },
)
