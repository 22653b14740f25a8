// Relays one pass-through answer to the client as it arrives and reads its usage on the way: a stream
// frame by frame (hiding the usage chunk the gateway asked for on the client's behalf), a JSON body
// whole (usage from a bounded copy, or from its tail when it is too large to keep). Only an allow-list
// of upstream headers is forwarded. Every callback is guarded: the relay always settles, once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Usage } from '../formats/canonical.ts';
import { isRecord } from '../formats/errors.ts';
import { createStreamTap, usageFromTail, usageOfAnswer } from '../formats/passthrough/usage.ts';
import { createSseParser, sseFrame, type SseFrame } from '../formats/sse.ts';
import { consumedUsage, normalizeUsage } from '../engine/usage.ts';
import { bodyDecoder, contentCodings } from '../engine/content-coding.ts';
import { BodyText, BOM_BYTES, bomContentType, utf8ContentType } from '../engine/charset.ts';

/**
 * Upstream headers a client may see: what it needs to read the body. Never the provider's request or
 * organisation ids, its rate-limit figures for the operator's account, cookies or hop-by-hop headers.
 * Nor content-encoding: an encoded body is decoded to read its usage and relayed decoded.
 */
const FORWARDED = ['content-type', 'cache-control'] as const;

/** A JSON answer up to this size is kept whole to read its usage; past it, only its tail is. */
const CAPTURE_BYTES = 4 * 1024 * 1024;
const TAIL_BYTES = 64 * 1024;

export type Relayed = {
  usage: Usage | null;
  /** The answer did not finish normally: usage is what it consumed (reported or estimated). */
  partial: boolean;
  clientGone: boolean;
  /** Why the relay stopped early (upstream cut, unreadable bytes), for the attempt record. */
  failed: string | null;
};

export type RelayOptions = { id: string; provider: string; inputEstimate: number; hideUsageChunk: boolean };

/** A chunk with its `usage` member removed (a client that did not ask for usage never sees it). */
function withoutUsage(f: SseFrame): string {
  let v: unknown;
  try { v = JSON.parse(f.data); } catch { return sseFrame(f.data, f.event); }
  if (!isRecord(v) || !('usage' in v)) return sseFrame(f.data, f.event);
  delete v.usage;
  return sseFrame(JSON.stringify(v), f.event);
}

/**
 * Relays `up` (a success whose content encoding, if any, the caller checked with contentCodings) to
 * the client, reading its usage on the way. Its text is read in its charset (src/engine/charset.ts):
 * a JSON body still goes out byte for byte under the upstream's own content-type (its charset set to
 * its byte order mark's encoding when the two disagree), a stream, re-framed as UTF-8, says
 * charset=utf-8 (it said another before, over UTF-8 bytes).
 */
export function relayAnswer(up: IncomingMessage, res: ServerResponse, o: RelayOptions): Promise<Relayed> {
  const type = up.headers['content-type'];
  const sse = String(type ?? '').toLowerCase().includes('event-stream');
  const codings = contentCodings(up.headers['content-encoding']);
  const headers: Record<string, string | string[]> = {};
  for (const h of FORWARDED) { const v = up.headers[h]; if (v !== undefined) headers[h] = v; }
  /** The text the gateway reads, as UTF-8 (recoded when it is in another charset). */
  const text = new BodyText(type, o.provider);
  if (text.declared && sse) headers['content-type'] = utf8ContentType(String(type));
  // A JSON body goes out byte for byte, so its length holds (decoded, it has another); a stream is re-framed and goes out chunked.
  if (!sse && codings.length === 0 && up.headers['content-length'] !== undefined) headers['content-length'] = up.headers['content-length'];
  headers['x-inference-id'] = o.id;
  headers['x-gateway-provider'] = o.provider;
  /**
   * A JSON body's head is written once its first bytes show whether a byte order mark contradicts its
   * label (`charset=utf-8` over UTF-16): then the label is the BOM's (bomContentType), so a client
   * decoding by the label reads the bytes the gateway read. `held` is the start kept until then.
   */
  let held: Buffer | null = sse ? null : Buffer.alloc(0);
  const writeHead = (start: Buffer): void => {
    const relabelled = bomContentType(type, start);
    if (relabelled !== null) headers['content-type'] = relabelled;
    res.writeHead(up.statusCode ?? 502, headers);
  };
  if (sse) writeHead(Buffer.alloc(0));

  const parser = sse ? createSseParser() : null;
  const tap = sse ? createStreamTap() : null;
  const head: Buffer[] = [];
  let headBytes = 0;
  let tail = Buffer.alloc(0);
  let total = 0;

  return new Promise<Relayed>((resolve) => {
    let settled = false;
    const settle = (r: Relayed): void => { if (!settled) { settled = true; resolve(r); } };
    const consumed = (failed: string | null, clientGone: boolean): Relayed => {
      const reported = tap ? tap.usage() : null;
      return { usage: consumedUsage(reported, o.inputEstimate, tap?.outputChars ?? 0), partial: true, clientGone, failed };
    };
    // Pausing holds the decoder too: one compressed chunk can decode to megabytes the client is not reading.
    const write = (out: string | Buffer): void => {
      if (out.length > 0 && !res.write(out)) { up.pause(); decoder?.pause(); res.once('drain', () => { up.resume(); decoder?.resume(); }); }
    };
    // Frames are re-framed from what the tap read, never relayed as raw bytes: a frame cut short (or not
    // a JSON object) stops the relay before it, and the stream ends with an error event (cut below).
    const frames = (list: SseFrame[]): string => {
      let out = '';
      for (const f of list) {
        const verdict = tap!.frame(f);
        if (verdict === 'drop' || (verdict === 'usage' && o.hideUsageChunk)) continue;
        out += o.hideUsageChunk ? withoutUsage(f) : sseFrame(f.data, f.event);
      }
      return out;
    };
    /** The upstream stopped mid-answer (or sent what cannot be read): a stream ends with an error event, a JSON body is cut. */
    const cut = (why: string): void => {
      if (settled) return;
      up.destroy();
      decoder?.destroy();
      if (sse && !res.destroyed) res.end(sseFrame(JSON.stringify({ error: { message: `upstream stream failed: ${why}`, type: 'api_error', code: 'upstream_error' } })));
      else res.destroy();
      settle(consumed(why, false));
    };

    /** Keeps a JSON body's text (as UTF-8) to read its usage at the end. */
    const capture = (t: Buffer): void => {
      if (headBytes + t.length <= CAPTURE_BYTES) { head.push(t); headBytes += t.length; }
      tail = tail.length + t.length <= TAIL_BYTES ? Buffer.concat([tail, t]) : Buffer.concat([tail, t]).subarray(-TAIL_BYTES);
    };
    const onData = (c: Buffer): void => {
      if (settled) return;
      try {
        const t = text.push(c);
        total += t.length;
        if (parser) {
          write(frames(parser.push(t)));
          if (tap!.failure !== null) cut(tap!.failure);
          return;
        }
        capture(t);
        if (held !== null) {
          held = Buffer.concat([held, c]);
          if (held.length < BOM_BYTES) return;
          c = held;
          held = null;
          writeHead(c);
        }
        write(c);
      } catch (e) { cut(`the gateway could not read the answer (${(e as Error).message})`); }
    };
    const onEnd = (): void => {
      if (settled) return;
      try {
        const rest = text.end();
        total += rest.length;
        if (parser) {
          const out = frames(rest.length > 0 ? parser.push(rest) : []) + frames(parser.end());
          if (tap!.failure !== null) { write(out); cut(tap!.failure); return; }
          res.end(out);
          const reported = tap!.usage();
          if (tap!.complete && reported) settle({ usage: normalizeUsage(reported), partial: false, clientGone: false, failed: null });
          else settle(consumed(tap!.complete ? null : 'the stream ended before completion', false));
          return;
        }
        if (held !== null) { writeHead(held); write(held); held = null; }
        res.end();
        if (rest.length > 0) capture(rest);
        let usage: Usage | null = null;
        if (total <= CAPTURE_BYTES) { try { usage = usageOfAnswer(JSON.parse(Buffer.concat(head, headBytes).toString('utf8'))); } catch { usage = null; } }
        else usage = usageFromTail(tail.toString('utf8'));
        settle({ usage: usage ? normalizeUsage(usage) : null, partial: false, clientGone: false, failed: null });
      } catch (e) { cut(`the gateway could not read the answer (${(e as Error).message})`); }
    };
    const decoder = codings.length === 0 ? null : bodyDecoder(codings, { data: onData, end: onEnd, error: (e) => cut(e.message) });
    up.on('data', decoder ? (c: Buffer) => decoder.write(c) : onData);
    up.on('end', decoder ? () => decoder.end() : onEnd);
    up.on('error', (e) => cut(e.message));
    up.on('close', () => { if (!up.complete) cut('the upstream closed the connection mid-answer'); });
    res.on('close', () => {
      if (settled || res.writableFinished) return;
      up.destroy();
      decoder?.destroy();
      settle(consumed(null, true));
    });
  });
}
