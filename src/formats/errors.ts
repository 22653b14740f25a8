// Helpers every codec's error decoder shares: status -> kind, readable text from non-JSON bodies,
// and the lenient JSON read of an error body (some servers wrap it in an array).
import type { ErrorKind } from './canonical.ts';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** HTTP status -> error kind; the fallback for every format when the body says nothing usable. */
export function kindFromStatus(status: number): ErrorKind {
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 503 || status === 529) return 'overloaded';
  if (status === 501) return 'not_implemented';
  if (status >= 500) return 'api_error';
  return 'invalid_request';
}

/** The tags an HTML document begins with, after any comments. */
const HTML_TAG = /^<(?:!doctype\s+html|html|head|body)[\s>]/i;

/** Whether `text` is an HTML document (a proxy's or CDN's error page). Linear: no regex over the body. */
function isHtml(text: string): boolean {
  let i = 0;
  while (text.startsWith('<!--', i)) {
    const end = text.indexOf('-->', i + 4);
    if (end < 0) return false;
    i = end + 3;
    while (i < text.length && text.charCodeAt(i) <= 32) i++;
  }
  return HTML_TAG.test(text.slice(i, i + 16));
}

/** Up to 200 characters of `html`'s text: tags dropped, white space collapsed (one pass, no regex over the page). */
function textOf(html: string): string {
  let out = '';
  let inTag = false;
  for (let i = 0; i < html.length && out.length < 1000; i++) {
    const c = html[i]!;
    if (c === '<') inTag = true;
    else if (c === '>' && inTag) { inTag = false; out += ' '; } else if (!inTag) out += c;
  }
  return out.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/** The text of the first `<tag ...>...</tag>` in `text` (`lower` is it in lower case). */
function element(lower: string, text: string, tag: string): string {
  const open = lower.indexOf(`<${tag}`);
  const start = open < 0 ? -1 : lower.indexOf('>', open);
  const end = start < 0 ? -1 : lower.indexOf(`</${tag}>`, start);
  return end < 0 ? '' : textOf(text.slice(start + 1, end));
}

/**
 * A readable message from a body that is not the JSON we expected (HTML error pages, proxies). An
 * HTML page is named by its title (or first heading, or else its text), not quoted: its first 500
 * characters are markup (a CDN's 502 or 524 page opens with a kilobyte of head and comments).
 */
export function plainErrorMessage(status: number, bodyText: string): string {
  const text = bodyText.trim();
  if (text === '') return `upstream returned HTTP ${status}`;
  if (isHtml(text)) {
    const head = text.slice(0, 16384);
    const lower = head.toLowerCase();
    const name = element(lower, head, 'title') || element(lower, head, 'h1') || textOf(head);
    return `upstream returned HTTP ${status} with an HTML page${name ? `: ${name}` : ''}`;
  }
  return text.replace(/\s+/g, ' ').slice(0, 500);
}

/** The parsed error body (the first element when wrapped in an array), or undefined when not JSON. */
export function parseErrorJson(bodyText: string): unknown {
  let parsed: unknown;
  try { parsed = JSON.parse(bodyText); } catch { return undefined; }
  return Array.isArray(parsed) ? parsed[0] : parsed;
}
