/**
 * The processes of the inspector benchmark (bench/inspect.ts), each on its own so that each has
 * its own event loop, as on a developer's machine: `inspect-server.ts app` answers every request
 * 200 with a small JSON body; `inspect-server.ts inspector <app URL>` runs `@hookguard/inspect` (the
 * built package) in front of it; `inspect-server.ts proxy <app URL>` is the floor: a bare Node
 * proxy that pipes each request and answer and does nothing else. Each sends its receiving address over IPC once it listens.
 */
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startInspector } from '@hookguard/inspect'
import { SECRET } from './http-server.ts'

const [role, appUrl] = process.argv.slice(2)

if (role === 'app') {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"handled":true}'))
  })
  server.listen(0, '127.0.0.1', () => process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))
} else if (role === 'proxy' && appUrl !== undefined) {
  const target = new URL(appUrl)
  const agent = new Agent({ keepAlive: true })
  const server = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      },
    )
    req.pipe(upstream)
  })
  server.listen(0, '127.0.0.1', () => process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))
} else if (role === 'inspector' && appUrl !== undefined) {
  const inspector = await startInspector({
    auth: { mode: 'secret', secret: SECRET },
    forwardTo: appUrl,
    port: 0,
    uiPort: 0,
    maxRecords: 500,
  })
  process.send?.({ url: inspector.receiveUrl })
} else {
  throw new Error('usage: inspect-server.ts app | proxy <app URL> | inspector <app URL>')
}
