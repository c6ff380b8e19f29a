/** What {@link h} takes as children: strings become text nodes; nothing false-y is added. */
export type Child = Node | string | null | undefined | false

/**
 * Builds an element. Every string becomes a text node and every attribute is set as a value, so
 * nothing a request held is ever parsed as markup (the server's CSP forbids inline script too).
 */
export function h(tag: string, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) el.setAttribute(name, value)
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    el.append(typeof child === 'string' ? document.createTextNode(child) : child)
  }
  return el
}

/** A titled block of the detail pane or the composer. */
export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'block' }, h('h3', {}, title), ...children)
}

/** A two-column table of names and values, all text. */
export function table(rows: [string, string][], testid?: string): HTMLElement {
  return h('table', { class: 'kv', 'data-testid': testid }, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v))))
}
