import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../scripts/lib/packages.ts'
import { extractSnippets } from '../scripts/lib/snippets.ts'

// docs/frameworks/fastify.md's complete app in mode oauth2 is examples/fastify-oauth2.ts, run here
// with the page's sample app id and secret, and delivered to by the page's own `hookguard send`
// lines (the command from source), which must print what the page says under them. Compiled and
// delivered to from the tarballs by `pnpm test:snippets` too.

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PAGE = 'docs/frameworks/fastify.md'
const EXAMPLE = 'examples/fastify-oauth2.ts'
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx')
const page = readFileSync(join(ROOT, PAGE), 'utf8')

/** `NAME=value …` at the start of a command line, and the rest split on spaces. */
function commandLine(line: string): { env: Record<string, string>; args: string[] } {
  const words = line.trim().split(/\s+/)
  const env: Record<string, string> = {}
  while (/^[A-Z_]+=/.test(words[0] ?? '')) {
    const [name, ...value] = (words.shift() as string).split('=')
    env[name as string] = value.join('=')
  }
  return { env, args: words }
}

/** The page's `… npx tsx server.ts` line with APP_ID, and its `hookguard send` lines with the comment under each. */
function pageCommands() {
  const lines = page.split('\n')
  const start = lines.find((line) => /^APP_ID=\S+ .*npx tsx server\.ts$/.test(line))
  const sends = lines.flatMap((line, i) => {
    const comment = /^# (.+)$/.exec(lines[i + 1] ?? '')?.[1]
    if (!line.includes('npx -p @hookguard/emulator hookguard send') || !line.includes('--mode oauth2') || comment === undefined) return []
    const { env, args } = commandLine(line)
    return [{ line: i + 1, env, args: args.slice(args.indexOf('send')), says: comment }]
  })
  return { start: start === undefined ? undefined : commandLine(start), sends }
}

describe(`${PAGE}: the complete app in mode oauth2`, () => {
  it(`is ${EXAMPLE}, as the page shows it`, () => {
    const block = extractSnippets(page, PAGE).snippets.find((s) => s.deliveries.some((d) => d.mode === 'oauth2'))
    const example = readFileSync(join(ROOT, EXAMPLE), 'utf8')
    expect(block?.code).toBe(example.slice(example.indexOf('import ')))
  })

  describe('run with the sample app id and secret the page gives', () => {
    const { start, sends } = pageCommands()
    let app: ChildProcess | undefined
    let origin = ''
    let output = ''

    beforeAll(async () => {
      if (start === undefined) throw new Error(`${PAGE}: no APP_ID=… APP_SECRET=… npx tsx server.ts line`)
      app = spawn(TSX, ['--conditions=@hookguard/source', EXAMPLE], {
        cwd: ROOT,
        env: { ...process.env, ...start.env, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      origin = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the example did not listen in time\n${output}`)), 30_000)
        const read = (chunk: Buffer) => {
          output += chunk.toString('utf8')
          const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
          if (url !== undefined) {
            clearTimeout(timer)
            resolve(url)
          }
        }
        app?.stdout?.on('data', read)
        app?.stderr?.on('data', read)
        app?.on('exit', (code) => {
          clearTimeout(timer)
          reject(new Error(`the example exited ${code}\n${output}`))
        })
      })
    }, 40_000)

    afterAll(async () => {
      if (app === undefined || app.exitCode !== null) return
      const exited = new Promise((resolve) => app?.once('exit', resolve))
      app.kill()
      await exited
    })

    it('the page has its run line and two send lines, a delivery and a refusal', () => {
      expect(start?.env.APP_ID).toBeTruthy()
      expect(start?.env.APP_SECRET?.length).toBeGreaterThanOrEqual(16)
      expect(sends.map((send) => send.says.slice(0, 3))).toEqual(['204', 'hoo'])
    })

    it.each(pageCommands().sends)(
      `${PAGE}:$line prints what the page says under it`,
      async ({ env, args, says }) => {
        const local = (text: string) => text.replaceAll('http://localhost:3000', origin)
        const result = await run(TSX, ['--conditions=@hookguard/source', 'packages/emulator/src/cli.ts', ...args.map(local)], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, NO_COLOR: '1', ...env },
          signal: AbortSignal.timeout(30_000),
        })
        const printed = `${result.stdout.split('\n')[0]}\n${result.stderr}`
        expect(printed).toContain(local(says))
      },
      40_000,
    )

    it('logs the verified delivery, and neither the app secret nor a token', () => {
      expect(output).toContain('"msg":"verified delivery"')
      expect(output).toContain('/webhooks/token?appid=')
      expect(output).not.toContain(start?.env.APP_SECRET)
      expect(output).not.toContain('access_token')
    })
  })
})
