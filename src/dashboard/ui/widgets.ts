// Small building blocks shared by the pages: stat cards, tables, labelled fields, badges, notices.
import { h, toSvg, type Child, type VNode } from './dom.ts';
import { ApiError } from './api.ts';
import { wordPieces } from './word-pieces.ts';

export const card = (label: string, value: string, sub?: string): HTMLElement =>
  h('div', { class: 'card' }, h('div', { class: 'card-label' }, label), h('div', { class: 'card-value' }, value), sub ? h('div', { class: 'card-sub' }, sub) : null);

export const section = (title: string, ...children: Child[]): HTMLElement =>
  h('section', { class: 'panel', 'aria-label': title }, h('h2', null, title), ...children);

export function table(head: string[], rows: Child[][], opts: { caption?: string; numeric?: number[]; empty?: string } = {}): HTMLElement {
  const num = new Set(opts.numeric ?? []);
  return h('div', { class: 'table-wrap' },
    h('table', null,
      opts.caption ? h('caption', null, opts.caption) : null,
      h('thead', null, h('tr', null, ...head.map((c, i) => h('th', { scope: 'col', class: num.has(i) ? 'num' : null }, c)))),
      h('tbody', null, rows.length === 0
        ? h('tr', null, h('td', { colspan: head.length, class: 'empty' }, opts.empty ?? 'Nothing here yet.'))
        : rows.map((r) => h('tr', null, ...r.map((c, i) => (num.has(i) ? h('td', { class: 'num' }, c) : textCell(c))))))));
}

/** Puts a <wbr> between the pieces of every text under `root` (its text, as read or copied, is unchanged). */
export function breakLongWords(root: Node): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  while (walker.nextNode()) texts.push(walker.currentNode as Text);
  for (const t of texts) {
    const pieces = wordPieces(t.data);
    if (pieces.length > 1) t.replaceWith(...pieces.flatMap((p, i) => (i ? [document.createElement('wbr'), p] : [p])));
  }
}

/** A cell of text: its long words may wrap (word-pieces.ts), its ordinary ones stay whole. */
export function textCell(...children: Child[]): HTMLTableCellElement {
  const td = h('td', null, ...children);
  breakLongWords(td);
  return td;
}

let fieldSeq = 0;
/** A label and its control, tied by id (screen readers announce the label). */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  const id = control.id || `f${++fieldSeq}`;
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hint ? h('small', null, hint) : null);
}

export function select(name: string, options: Array<[string, string]>, value: string): HTMLSelectElement {
  return h('select', { name }, ...options.map(([val, label]) => h('option', { value: val, selected: val === value }, label)));
}

export const badge = (text: string, kind: 'ok' | 'warn' | 'bad' | 'muted'): HTMLElement => h('span', { class: `badge ${kind}` }, text);

export const statusBadge = (status: number): HTMLElement => badge(String(status), status < 400 ? 'ok' : status === 429 || status === 402 ? 'warn' : 'bad');

export const chart = (node: VNode): HTMLElement => h('div', { class: 'chart-wrap' }, toSvg(node));

/** What went wrong, as the error boxes say it: the API's message and its code. */
export const errorText = (e: unknown): string => (e instanceof ApiError ? `${e.message} (${e.code})` : e instanceof Error ? e.message : String(e));

export function errorBox(e: unknown): HTMLElement {
  return h('div', { class: 'notice error', role: 'alert' }, errorText(e));
}

/** A secret shown once, with a copy button. */
export function secretBox(title: string, secret: string, note: string): HTMLElement {
  const code = h('code', { class: 'secret', 'data-testid': 'secret' }, secret);
  const copy = h('button', { type: 'button', class: 'secondary', onclick: () => { void navigator.clipboard?.writeText(secret).then(() => { copy.textContent = 'Copied'; }, () => { copy.textContent = 'Select and copy'; }); } }, 'Copy');
  return h('div', { class: 'notice success', role: 'status' }, h('strong', null, title), h('div', { class: 'secret-row' }, code, copy), h('p', null, note));
}

/** `<pre>` of text, pretty-printed when it is JSON. */
export function textBlock(text: string | null, empty: string): HTMLElement {
  if (text === null || text === '') return h('p', { class: 'muted' }, empty);
  let shown = text;
  try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON: shown as it is */ }
  return h('pre', { class: 'code', tabindex: 0 }, shown);
}
