// DOM construction for the dashboard: elements from tag, attributes and children, where every string
// child becomes a text node. Nothing here (or anywhere in the dashboard) assigns innerHTML, so stored
// text (prompts, model output, key and user names) is always shown as text, never run as markup.

import type { VNode } from './vnode.ts';
export type { VNode } from './vnode.ts';

export type Child = Node | string | number | null | undefined | false | Child[];
type Listener = (e: Event) => void;
export type Attrs = Record<string, string | number | boolean | null | undefined | Listener>;

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

function apply(el: Element, attrs: Attrs | null | undefined): void {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'value' && (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement)) el.value = String(v);
    else if (k === 'checked' && el instanceof HTMLInputElement) el.checked = v === true;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  apply(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function toSvg(node: VNode): SVGElement {
  const el = document.createElementNS(SVG_NS, node.tag);
  for (const [k, val] of Object.entries(node.attrs)) el.setAttribute(k, String(val));
  for (const c of node.children) el.appendChild(typeof c === 'string' ? document.createTextNode(c) : toSvg(c));
  return el;
}

/** Replaces the children of `el`. */
export function mount(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}
