// The one rule for what an upstream stream event may carry, shared by every stream decoder and relay: its
// data is one JSON object. A frame cut short, a line that is not JSON, `null`, a number, a string or an array
// is a protocol error that loses data (an event the answer needed is gone): it fails the stream, never is
// skipped. Keep-alives are what the protocols define as such and never reach this test: SSE comments
// (dropped by the parser), Anthropic `ping` events, OpenAI's `[DONE]` terminator, and an event with empty
// data, which carries nothing that could be lost. See docs/formats.md, "Stream events".
import type { ErrorKind } from './canonical.ts';
import type { StreamProgress } from './codec.ts';
import { isRecord } from './errors.ts';

type Rec = Record<string, unknown>;

/** A canonical error event's payload. */
export type StreamError = { type: ErrorKind; message: string };

/** Why a frame is not an event: a protocol error, reported as the stream's failure. */
export class UnreadableFrame {
  readonly kind: ErrorKind = 'api_error';
  readonly message: string;
  constructor(message: string) { this.message = message; }
  get error(): StreamError { return { type: this.kind, message: this.message }; }
}

/** What a frame's data holds, named without quoting it (upstream bytes never go into messages). */
function describe(data: string): string {
  let v: unknown;
  try { v = JSON.parse(data); } catch {
    return `${data.length} characters that are not JSON: cut short or malformed`;
  }
  return `JSON ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v} instead of an object`;
}

/** The error for data that is not a JSON object (data already known not to be one). */
export function unreadableFrame(data: string, what = 'event'): UnreadableFrame {
  return new UnreadableFrame(`the upstream sent a stream ${what} the gateway cannot read (${describe(data)}); the answer is incomplete`);
}

/** Data that carries nothing (empty or blank): ignored like a comment. Only tested once a parse failed. */
const isBlank = (data: string): boolean => data.trim() === '';

/**
 * Reads one event's data: the object it holds; null when the data is blank (nothing to read, nothing
 * lost); else the protocol error it is. Formats with markers of their own (`[DONE]`) test them first.
 */
export function readEvent(data: string): Rec | null | UnreadableFrame {
  let v: unknown;
  try { v = JSON.parse(data); } catch {
    return isBlank(data) ? null : unreadableFrame(data);
  }
  return isRecord(v) ? v : unreadableFrame(data);
}

/**
 * A same-format relay met a frame it cannot read: the stream failed. Before content nothing goes to the
 * client (the attempt fails like an error status and may fall back); after content the client's stream
 * ends here, with the error event `fail` renders in the client's format, and the relay forwards nothing
 * more (`ended`: the upstream can be released). Never a silent success.
 */
export function relayUnreadable(e: UnreadableFrame, progress: StreamProgress, fail: (error: StreamError) => string): string {
  progress.error ??= { kind: e.kind, message: e.message };
  progress.complete = false;
  if (!progress.content) return '';
  progress.ended = true;
  return fail(e.error);
}

// ---- Checking a frame the relays forward without parsing it -------------------------------------------

const WS = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const skipWs = (s: string, i: number): number => { while (WS(s.charCodeAt(i))) i++; return i; };
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * The index of the quote closing the JSON string whose first character (after its opening quote) is at
 * `from`, or -1 when the string is not valid JSON (unterminated, a raw control character, a bad escape).
 */
export function jsonStringEnd(s: string, from: number): number {
  const n = s.length;
  for (let i = from; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) return i;
    if (c < 0x20) return -1;
    if (c !== 0x5c) continue;
    const e = s.charCodeAt(++i);
    if (e === 0x75) {
      if (!(isHex(s.charCodeAt(i + 1)) && isHex(s.charCodeAt(i + 2)) && isHex(s.charCodeAt(i + 3)) && isHex(s.charCodeAt(i + 4)))) return -1;
      i += 4;
    } else if (!(e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) return -1;
  }
  return -1;
}

/** The end of the JSON number at `i` (RFC 8259 grammar), or -1. */
function numberEnd(s: string, i: number): number {
  if (s.charCodeAt(i) === 0x2d) i++;
  if (s.charCodeAt(i) === 0x30) i++;
  else if (isDigit(s.charCodeAt(i))) while (isDigit(s.charCodeAt(i))) i++;
  else return -1;
  if (s.charCodeAt(i) === 0x2e) {
    if (!isDigit(s.charCodeAt(++i))) return -1;
    while (isDigit(s.charCodeAt(i))) i++;
  }
  const e = s.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    const sign = s.charCodeAt(++i);
    if (sign === 0x2b || sign === 0x2d) i++;
    if (!isDigit(s.charCodeAt(i))) return -1;
    while (isDigit(s.charCodeAt(i))) i++;
  }
  return i;
}

/** Past `"key" :` at `i`, or -1. */
function afterKey(s: string, i: number): number {
  if (s.charCodeAt(i) !== 0x22) return -1;
  const end = jsonStringEnd(s, i + 1);
  if (end < 0) return -1;
  i = skipWs(s, end + 1);
  return s.charCodeAt(i) === 0x3a ? i + 1 : -1;
}

/** Containers open during a check (1 object, 2 array): scratch shared by every call, the loop never yields. */
const MAX_DEPTH = 128;
const containers = new Uint8Array(MAX_DEPTH);

/**
 * Whether `s` is exactly one JSON object, checked without building it (a character loop, no allocation):
 * what a relay runs before it forwards a frame it did not parse. False also for nesting deeper than
 * 128, where the caller parses instead; true only for what JSON.parse reads as an object.
 */
export function isJsonObject(s: string): boolean {
  let i = skipWs(s, 0);
  if (s.charCodeAt(i) !== 0x7b) return false;
  let depth = 0;
  for (;;) {
    // A value starts at i.
    i = skipWs(s, i);
    const c = s.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      const j = skipWs(s, i + 1);
      if (s.charCodeAt(j) === c + 2) i = j + 1; // `{}` or `[]`
      else {
        if (depth === MAX_DEPTH) return false;
        containers[depth++] = c === 0x7b ? 1 : 2;
        if (c === 0x7b) { i = afterKey(s, j); if (i < 0) return false; } else i = j;
        continue;
      }
    } else if (c === 0x22) {
      const end = jsonStringEnd(s, i + 1);
      if (end < 0) return false;
      i = end + 1;
    } else if (c === 0x74) { if (!s.startsWith('true', i)) return false; i += 4; }
    else if (c === 0x66) { if (!s.startsWith('false', i)) return false; i += 5; }
    else if (c === 0x6e) { if (!s.startsWith('null', i)) return false; i += 4; }
    else { i = numberEnd(s, i); if (i < 0) return false; }
    // After a value: close containers, or a comma and the next value.
    for (;;) {
      i = skipWs(s, i);
      if (depth === 0) return i === s.length;
      const d = s.charCodeAt(i);
      const inObject = containers[depth - 1] === 1;
      if (d === (inObject ? 0x7d : 0x5d)) { depth--; i++; continue; }
      if (d !== 0x2c) return false;
      i = inObject ? afterKey(s, skipWs(s, i + 1)) : i + 1;
      if (i < 0) return false;
      break;
    }
  }
}
