import type { SentAnswer } from '../actions.ts'
import { pathOnly } from '../url-path.ts'
import type { RecordDetail } from '../view.ts'
import { api, authorized, download } from './api.ts'
import { base64Bytes } from './bytes.ts'
import { h, section } from './dom.ts'
import { answersText } from './format.ts'

const EXPORTS = ['send', 'curl', 'har', 'fixture', 'fixture-test'] as const

/** A delivery's actions: replay, edit and resend (through the composer), export, download, diff. */
export function deliveryActions(d: RecordDetail, onEdit: (path: string, body: string) => void): HTMLElement {
  const result = h('p', { class: 'result', 'data-testid': 'action-result', 'aria-live': 'polite' })
  const count = h('input', {
    type: 'number',
    min: '1',
    max: '20',
    value: '1',
    'aria-label': 'Times',
    'data-testid': 'replay-count',
  }) as HTMLInputElement
  const replayButton = h('button', { type: 'button', 'data-testid': 'replay' }, 'Replay')
  replayButton.addEventListener('click', async () => {
    result.textContent = 'Replaying…'
    try {
      const { answers } = await api<{ answers: SentAnswer[] }>(`/api/records/${d.id}/replay`, {
        method: 'POST',
        body: JSON.stringify({ count: Number(count.value) }),
      })
      result.textContent = `Answers: ${answersText(answers)}`
    } catch (error) {
      result.textContent = `Failed: ${(error as Error).message}`
    }
  })

  const output = h('pre', { class: 'export', 'data-testid': 'export-output' })
  const exportButtons = EXPORTS.map((format) => {
    const button = h('button', { type: 'button', 'data-testid': `export-${format}` }, format === 'send' ? 'hookguard send' : format)
    button.addEventListener('click', async () => {
      try {
        output.textContent = await (await authorized(`/api/records/${d.id}/export/${format}`)).text()
      } catch (error) {
        output.textContent = `Failed: ${(error as Error).message}`
      }
    })
    return button
  })
  const copy = h('button', { type: 'button' }, 'Copy')
  copy.addEventListener('click', () => void navigator.clipboard?.writeText(output.textContent ?? ''))
  const downloadButton = (format: string, label: string) => {
    const button = h('button', { type: 'button', class: 'link', 'data-testid': `download-${format}` }, label)
    button.addEventListener('click', () => {
      download(`/api/records/${d.id}/export/${format}?download=1`).catch((error: unknown) => {
        output.textContent = `Failed: ${(error as Error).message}`
      })
    })
    return button
  }
  const downloads = h(
    'p',
    {},
    'Download: ',
    downloadButton('fixture', 'fixture JSON'),
    ' · ',
    downloadButton('fixture-test', 'Vitest file'),
    ' · ',
    downloadButton('har', 'HAR'),
  )

  const other = h('input', {
    type: 'number',
    min: '1',
    placeholder: 'other #',
    'aria-label': 'Compare with',
    'data-testid': 'diff-with',
  }) as HTMLInputElement
  const diffButton = h('button', { type: 'button', 'data-testid': 'diff' }, 'Diff')
  diffButton.addEventListener('click', () => {
    if (other.value !== '') location.hash = `#/diff/${d.id}/${other.value}`
  })
  const editButton = h('button', { type: 'button', 'data-testid': 'edit' }, 'Edit and resend')
  editButton.addEventListener('click', () => onEdit(pathOnly(d.path), new TextDecoder().decode(base64Bytes(d.bodyBase64))))
  return section(
    'Actions',
    h('p', { class: 'row-actions' }, count, replayButton, editButton, other, diffButton),
    result,
    h('p', { class: 'row-actions' }, 'Export: ', ...exportButtons, copy),
    downloads,
    output,
  )
}
