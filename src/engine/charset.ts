// Reads an upstream body's text in the charset it is in. Every reader of upstream text (JSON answers,
// SSE streams, error bodies) works on UTF-8 bytes; a body in another charset (a Content-Type
// `charset=iso-8859-1`, `shift_jis`, `utf-16le`, or a byte order mark) is recoded to UTF-8 as it
// arrives, so its text is not mangled and UTF-16 JSON parses. The usual body (no charset, or UTF-8,
// without a BOM) is never recoded: its header costs an indexOf (and an endsWith or a map lookup when
// it has a parameter), its body one byte compare.
// Labels are the WHATWG Encoding Standard's (Node's TextDecoder, full ICU: `iso-8859-1` and `latin1`
// are windows-1252, `utf-16` is utf-16le), and a BOM overrides the label, as browsers decode.
import { throttledLog } from '../util/throttled-log.ts';

export type ContentType = string | string[] | undefined;

const one = (ct: ContentType): string | undefined => (Array.isArray(ct) ? ct[0] : ct);

/** Labels already read, by Content-Type value: an upstream sends the same one with every answer. */
const labels = new Map<string, string | null>();
const MAX_LABELS = 64;

/**
 * The charset label a Content-Type declares, lower-cased and unquoted, when it is not UTF-8; null
 * for none or UTF-8 (the body is read as it is).
 */
export function declaredCharset(ct: ContentType): string | null {
  const s = one(ct);
  // The usual headers, without a parameter or with UTF-8's, are told apart without parsing.
  if (s === undefined || s.indexOf('=') === -1 || s.endsWith('charset=utf-8')) return null;
  const known = labels.get(s);
  if (known !== undefined) return known;
  const label = charsetOf(s);
  if (labels.size >= MAX_LABELS) labels.clear();
  labels.set(s, label);
  return label;
}

function charsetOf(s: string): string | null {
  const at = s.search(/;\s*charset\s*=/i);
  if (at === -1) return null;
  let v = s.slice(s.indexOf('=', at) + 1);
  const semi = v.indexOf(';');
  if (semi !== -1) v = v.slice(0, semi);
  v = v.trim().replace(/^"(.*)"$/, '$1').trim().toLowerCase();
  return v === '' || v === 'utf-8' || v === 'utf8' ? null : v;
}

/**
 * Whether a body of this type is text the gateway reads (JSON, SSE, any text/*, or no type): never
 * AWS's binary event stream or another binary type, whose bytes are not characters.
 */
export function isTextType(ct: ContentType): boolean {
  const s = one(ct);
  if (s === undefined) return true;
  const t = s.toLowerCase();
  return t.startsWith('text/') || t.includes('json') || (t.includes('event-stream') && !t.includes('vnd.amazon'));
}

/** The Content-Type of a body recoded to UTF-8: its charset parameter says so. */
export function utf8ContentType(ct: string): string {
  return ct.replace(/(;\s*charset\s*=\s*)("[^"]*"|[^;\s]*)/i, '$1utf-8');
}

/** Bytes enough to tell whether a body opens with a byte order mark (a UTF-8 one is three). */
export const BOM_BYTES = 3;

/** The WHATWG name of a label (`utf-16` is `utf-16le`, `latin1` `windows-1252`); the label itself when unknown. */
function encodingName(label: string): string {
  try { return new TextDecoder(label).encoding; } catch { return label; }
}

/**
 * For a body relayed byte for byte: the Content-Type that matches its bytes when it opens with a byte
 * order mark that contradicts the declared charset (none declared: UTF-8, what JSON is in). The BOM
 * wins, as the WHATWG Encoding Standard decodes and as the gateway reads it (createRecoder), so the
 * charset parameter is set to the BOM's encoding (added when there was none). Null when they agree,
 * when there is no BOM in `start` (BOM_BYTES of the body, or all of a shorter one), or for a type whose
 * bytes are not text.
 */
export function bomContentType(ct: ContentType, start: Buffer): string | null {
  const s = one(ct);
  if (start.length === 0 || start[0]! < MAY_BE_BOM || s === undefined || !isTextType(s)) return null;
  const bom = bomEncoding(start);
  if (bom === null || bom === encodingName(declaredCharset(s) ?? 'utf-8')) return null;
  return /;\s*charset\s*=/i.test(s) ? s.replace(/(;\s*charset\s*=\s*)("[^"]*"|[^;\s]*)/i, `$1${bom}`) : `${s}; charset=${bom}`;
}

/** A body whose first byte is this or above may open with a byte order mark (EF BB BF, FE FF, FF FE). */
export const MAY_BE_BOM = 0xef;

/** The encoding a byte order mark at the start of `b` names, or null (also for too few bytes to tell). */
function bomEncoding(b: Buffer): string | null {
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  return null;
}

/** Whether `b` may still grow into a BOM: one byte that starts one, or a UTF-8 BOM's first two. */
const partialBom = (b: Buffer): boolean => (b.length === 1 && b[0]! >= MAY_BE_BOM) || (b.length === 2 && b[0] === 0xef && b[1] === 0xbb);

/** A charset label TextDecoder does not know: said once a minute per label, then read as UTF-8. */
const unknownLabel = throttledLog((l) => console.warn(l), 60_000);

/** Recodes one body to UTF-8 as its chunks arrive: a character split across chunks survives. */
export type Recoder = { push(chunk: Buffer): Buffer; end(): Buffer };

const STREAMING = { stream: true } as const;
const EMPTY = Buffer.alloc(0);

/**
 * A recoder for a body declared in `label` (null: none, UTF-8): a BOM at its start picks the encoding
 * and is dropped; without one the label does. A label TextDecoder does not know is read as UTF-8 (what
 * JSON and SSE are in, so the likeliest right reading; refusing would lose a good answer) and named in
 * the log with `from` (the upstream). Bytes invalid in the encoding become U+FFFD, never an error.
 */
export function createRecoder(label: string | null, from: string): Recoder {
  let decoder: TextDecoder | null = null;
  let held: Buffer | null = null;
  const open = (first: Buffer): void => {
    const encoding = bomEncoding(first) ?? label ?? 'utf-8';
    try { decoder = new TextDecoder(encoding); } catch {
      unknownLabel(`upstream ${from}`, `answered in charset ${JSON.stringify(encoding.slice(0, 40))}, which the gateway does not know: read as UTF-8`);
      decoder = new TextDecoder('utf-8');
    }
  };
  const recode = (text: string): Buffer => (text === '' ? EMPTY : Buffer.from(text, 'utf8'));
  return {
    push(chunk) {
      if (decoder === null) {
        // The encoding is decided once the start of the body can show whether it has a BOM.
        held = held === null ? chunk : Buffer.concat([held, chunk]);
        if (held.length === 0 || partialBom(held)) return EMPTY;
        chunk = held;
        held = null;
        open(chunk);
      }
      return recode(decoder!.decode(chunk, STREAMING));
    },
    end() {
      if (decoder === null) {
        const rest = held ?? EMPTY;
        held = null;
        open(rest);
        return recode(decoder!.decode(rest));
      }
      return recode(decoder!.decode());
    },
  };
}

/**
 * For a body read as it arrives: the recoder it needs by its Content-Type, a text type declared in a
 * charset other than UTF-8; else null, and its first chunk goes to recoderAtStart.
 */
const declaredRecoder = (ct: ContentType, from: string): Recoder | null => {
  const label = declaredCharset(ct);
  return label !== null && isTextType(ct) ? createRecoder(label, from) : null;
};

/** For a body declared in no charset or UTF-8: a recoder when its first chunk opens with a byte order mark. */
const recoderAtStart = (first: Buffer, ct: ContentType, from: string): Recoder | null =>
  (first.length > 0 && first[0]! >= MAY_BE_BOM && isTextType(ct) ? createRecoder(null, from) : null);

/**
 * One body's text as UTF-8, chunk by chunk, as it arrives: recoded when its Content-Type declares
 * another charset (`declared`, known from the headers alone: the caller relabels the type) or its first
 * bytes are a byte order mark; otherwise each chunk is passed on as it is (the usual body).
 */
export class BodyText {
  readonly declared: boolean;
  #recoder: Recoder | null;
  #sniff: boolean;
  readonly #ct: ContentType;
  readonly #from: string;

  constructor(ct: ContentType, from: string) {
    this.#ct = ct;
    this.#from = from;
    this.#recoder = declaredRecoder(ct, from);
    this.declared = this.#recoder !== null;
    this.#sniff = !this.declared;
  }

  /** The chunk as UTF-8 (empty while the recoder holds the start of a character or of a BOM). */
  push(chunk: Buffer): Buffer {
    if (this.#sniff && chunk.length > 0) {
      // Declared in no charset but UTF-8: read as it is, unless it opens with a byte order mark.
      this.#sniff = false;
      this.#recoder = recoderAtStart(chunk, this.#ct, this.#from);
    }
    return this.#recoder === null ? chunk : this.#recoder.push(chunk);
  }

  /** What the recoder still held (a character cut at the very end becomes U+FFFD); empty for a body passed on as it is. */
  end(): Buffer {
    const r = this.#recoder;
    this.#recoder = null;
    return r === null ? EMPTY : r.end();
  }
}

/** A whole body (an error answer, a bounded copy) as text in its charset. */
export function bodyText(body: Buffer, ct: ContentType, from: string): string {
  const label = declaredCharset(ct);
  if (label === null && (body.length === 0 || body[0]! < MAY_BE_BOM)) return body.toString('utf8');
  if (!isTextType(ct)) return body.toString('utf8');
  const r = createRecoder(label, from);
  return Buffer.concat([r.push(body), r.end()]).toString('utf8');
}
