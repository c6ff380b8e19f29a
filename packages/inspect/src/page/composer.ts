import type { SentAnswer } from '../actions.ts'
import type { PageState } from '../ui-context.ts'
import { pathOnly } from '../url-path.ts'
import { api } from './api.ts'
import { h } from './dom.ts'
import { answersText } from './format.ts'

export interface Composer {
  element: HTMLElement
  /** Puts a delivery's path and body in the composer, to edit and resend. */
  edit(path: string, body: string): void
  /**
   * The path of the newest delivery received: the composer's path until the reader types one (or
   * edits a delivery). `/` would send to a route the app does not have, and its 404 would read as
   * "your app refused what hookguard verifies".
   */
  seen(path: string): void
}

const SAMPLE = '{"event":"order.paid","data":{"url":"https://shop.example.com/p?id=42&utm=x","note":"5 < 6"}}'

/** The composer: a body sent signed again through the emulator, or broken on purpose by a preset. */
export function createComposer(state: PageState): Composer {
  const path = h('input', { type: 'text', value: '/', 'aria-label': 'Path', 'data-testid': 'composer-path' }) as HTMLInputElement
  let pathChosen = false
  /** The newest path seen, not yet in the field. */
  let latest: string | undefined
  path.addEventListener('input', () => {
    pathChosen = true
  })
  const body = h('textarea', { rows: '6', 'aria-label': 'Body', 'data-testid': 'composer-body' }) as HTMLTextAreaElement
  body.value = SAMPLE
  const preset = h(
    'select',
    { 'aria-label': 'Preset', 'data-testid': 'preset' },
    ...state.presets.map((p) => h('option', { value: p.name }, `${p.label} → ${p.expected}`)),
  ) as HTMLSelectElement
  const result = h('p', { class: 'result', 'data-testid': 'composer-result', 'aria-live': 'polite' })

  const resend = h('button', { type: 'button', 'data-testid': 'resend' }, `Send, signed (${state.mode})`)
  if (!state.canResend) resend.setAttribute('disabled', '')
  resend.addEventListener('click', async () => {
    result.textContent = 'Sending…'
    try {
      const { answers } = await api<{ answers: SentAnswer[] }>('/api/resend', {
        method: 'POST',
        body: JSON.stringify({ path: path.value, body: body.value }),
      })
      result.textContent = `Answer: ${answersText(answers)}`
    } catch (error) {
      result.textContent = `Failed: ${(error as Error).message}`
    }
  })
  const forge = h('button', { type: 'button', 'data-testid': 'send-preset' }, 'Send preset')
  forge.addEventListener('click', async () => {
    result.textContent = 'Sending…'
    try {
      const { answers, expected } = await api<{ answers: SentAnswer[]; expected: string }>('/api/preset', {
        method: 'POST',
        body: JSON.stringify({ name: preset.value, path: path.value, body: body.value }),
      })
      result.textContent = `Answer: ${answersText(answers)} (expected ${expected})`
    } catch (error) {
      result.textContent = `Failed: ${(error as Error).message}`
    }
  })

  const element = h(
    'section',
    { class: 'composer block' },
    h('h3', {}, 'Compose'),
    h('label', {}, 'Path ', path),
    body,
    h('p', { class: 'row-actions' }, resend),
    h('p', { class: 'row-actions' }, preset, forge),
    result,
  )
  return {
    element,
    edit(newPath, newBody) {
      pathChosen = true
      path.value = newPath
      body.value = newBody
      element.scrollIntoView()
    },
    seen(newest) {
      if (pathChosen) return
      // A burst brings hundreds a second: only the last is written, once they stop coming in one
      // turn, rather than the field's text replaced (and laid out) once per delivery.
      if (latest === undefined) {
        setTimeout(() => {
          // Without its query: the inspector's copy has credentials replaced, which would be sent as such.
          if (!pathChosen && latest !== undefined) path.value = pathOnly(latest)
          latest = undefined
        })
      }
      latest = newest
    },
  }
}
