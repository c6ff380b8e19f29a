// Receives the service's signed webhooks on POST /webhooks.
// Run: WEBHOOK_SECRET=… pnpm --filter examples express
import { webhook } from '@hookguard/express'
import express from 'express'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the signing secret from the service settings.')

const app = express()

app.post('/webhooks', webhook({ auth: { mode: 'secret', secret } }), (req, res) => {
  console.log('verified delivery:', req.webhook?.payload)
  res.sendStatus(204)
})

// The rest of the app's body parsers go after the webhook route: webhook() needs the raw bytes.
app.use(express.json())

const port = Number(process.env.PORT ?? 3000)
app.listen(port, () => console.log(`listening on http://localhost:${port}/webhooks`))
