// The one Server-Sent Events framer shared by every wire format: an incremental parser that is
// correct at any byte boundary, and the matching writer.

export type SseFrame = { event?: string; data: string; id?: string };

/**
 * The most text one event may hold (its pending line plus its data lines), in UTF-16 code units: an
 * upstream that never ends a line would otherwise grow the parser's buffer without bound. 16 Mi
 * characters leaves room for the largest real events (a Gemini image inline, base64, is a few MB).
 */
export const SSE_EVENT_LIMIT = 16 * 1024 * 1024;

/** Thrown by push() when one event passes the limit; the stream is unusable from there on. */
export class SseLimitError extends Error {
  override readonly name = 'SseLimitError';
}

export type SseParser = {
  /** Feed raw bytes; returns every frame completed by them (possibly none). */
  push(chunk: Uint8Array): SseFrame[];
  /** End of stream: flushes a final frame that lacked its closing blank line. */
  end(): SseFrame[];
};

/**
 * Parses the text/event-stream grammar (WHATWG HTML §9.2.6): lines end in \r\n, \n or \r;
 * `:` lines are comments (keep-alives); `data` lines of one event are joined with \n; a field
 * value loses one leading space. Bytes are decoded in streaming mode so a multi-byte UTF-8
 * character split across chunks survives, and a \r at the end of one chunk followed by \n at
 * the start of the next counts as one line break.
 */
const STREAMING = { stream: true } as const;

export function createSseParser(opts: { maxEventChars?: number } = {}): SseParser {
  const limit = opts.maxEventChars ?? SSE_EVENT_LIMIT;
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let dataChars = 0;
  let skipLeadingLf = false;
  let event: string | undefined;
  let id: string | undefined;
  const data: string[] = [];

  const tooLong = (): never => {
    pending = '';
    data.length = 0;
    throw new SseLimitError(`an upstream event is longer than ${limit} characters`);
  };

  const dispatch = (out: SseFrame[]): void => {
    // An event block with no data field is not an event (the spec drops it too).
    if (data.length > 0) {
      const frame: SseFrame = { data: data.length === 1 ? data[0]! : data.join('\n') };
      if (event !== undefined) frame.event = event;
      if (id !== undefined) frame.id = id;
      out.push(frame);
      data.length = 0;
    }
    dataChars = 0;
    event = undefined;
  };

  const line = (text: string, out: SseFrame[]): void => {
    if (text === '') return dispatch(out);
    // The common line first, without splitting it into field and value.
    if (text.startsWith('data:')) {
      data.push(text.charCodeAt(5) === 32 ? text.slice(6) : text.slice(5));
      if ((dataChars += text.length) > limit) tooLong();
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') { data.push(value); if ((dataChars += value.length) > limit) tooLong(); }
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    // `retry` and unknown fields carry nothing a gateway needs.
  };

  const consume = (text: string, out: SseFrame[]): void => {
    let s = text;
    if (skipLeadingLf && s.length > 0) {
      if (s.startsWith('\n')) s = s.slice(1);
      skipLeadingLf = false;
    }
    // Fast path, the usual stream: no \r in the new text, so lines end at \n only and indexOf finds
    // them (no per-character loop). `pending` never holds a line break: it was cut at the last one.
    if (s.indexOf('\r') === -1) {
      let nl = s.indexOf('\n');
      if (nl === -1) { pending += s; if (pending.length > limit) tooLong(); return; }
      line(pending === '' ? s.slice(0, nl) : pending + s.slice(0, nl), out);
      let start = nl + 1;
      while ((nl = s.indexOf('\n', start)) !== -1) { line(s.slice(start, nl), out); start = nl + 1; }
      pending = start < s.length ? s.slice(start) : '';
      if (pending.length > limit) tooLong();
      return;
    }
    // Only the new text can hold a line break: the carried-over part was scanned already. This
    // keeps a long line arriving in many small chunks linear rather than quadratic.
    const scanFrom = pending.length;
    pending += s;
    let start = 0;
    for (let i = scanFrom; i < pending.length; i++) {
      const c = pending.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      line(pending.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < pending.length) {
          if (pending.charCodeAt(i + 1) === 10) i++;
        } else {
          skipLeadingLf = true; // the \n, if any, is in the next chunk
        }
      }
      start = i + 1;
    }
    pending = pending.slice(start);
    if (pending.length > limit) tooLong();
  };

  return {
    push(chunk) {
      const out: SseFrame[] = [];
      consume(decoder.decode(chunk, STREAMING), out);
      return out;
    },
    end() {
      const out: SseFrame[] = [];
      consume(decoder.decode(), out);
      // Some upstreams close without the final blank line; their last event is still whole.
      if (pending !== '') line(pending, out);
      pending = '';
      dispatch(out);
      return out;
    },
  };
}

/**
 * The keep-alive written to a streaming client that has been sent nothing for a while: an SSE comment,
 * which every SSE parser drops (WHATWG §9.2.6; the `openai` and `@anthropic-ai/sdk` decoders skip `:`
 * lines, and a comment followed by a blank line dispatches no event). vLLM and OpenRouter send the same.
 */
export const SSE_KEEPALIVE = ': keep-alive\n\n';

/** One SSE frame; multi-line data is split over several `data:` lines so it round-trips. */
export function sseFrame(data: string, event?: string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${head}data: ${data}\n\n`;
  return `${head}${data.split(/\r\n|\r|\n/).map((l) => `data: ${l}`).join('\n')}\n\n`;
}
