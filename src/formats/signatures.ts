// Where a reasoning signature came from, so it only ever goes back to the model that signed it.
// Signatures are opaque and signer-specific: Anthropic refuses one it did not issue ("Invalid
// signature in thinking block"), Gemini one of another model ("Corrupted thought signature"), and
// Gemini 3 refuses a current-turn function call without one. A signature handed to a client in a
// format that is not its signer's own (a converted answer) is marked with its signer:
//   gwsig1:<family>:<model, URI-encoded; empty when any model of the family takes it>:<raw signature>
// The mark is a plain prefix, so a signature streamed in pieces is marked by marking its first piece.
// A raw (unmarked) signature in a client's request is its own format's signer's (Anthropic's for
// Messages clients); the client decoders qualify it so, and the target encoders send a signature
// only to its signer, unwrapped, dropping the rest (each drop reported).
import type { Block, CanonicalResponse, Message, StreamEvent } from './canonical.ts';
import type { ClientFormat, WireFormat } from './codec.ts';

export type SignerFamily = 'anthropic' | 'gemini';
/** Who signed: a family (Claude on Anthropic, Bedrock and Vertex share one), and for Gemini the model. */
export type Signer = { family: SignerFamily; model?: string };

const MARK = 'gwsig1:';

/** The signer of a provider format's answers: Bedrock's signed reasoning is Claude's. */
export function signerOf(format: WireFormat, upstreamModel: string): Signer | null {
  switch (format) {
    case 'anthropic-messages': case 'bedrock-converse': return { family: 'anthropic' };
    case 'gemini': return { family: 'gemini', model: upstreamModel };
    default: return null;
  }
}

/** The family whose signatures a client format carries raw (its own provider's). */
const CLIENT_FAMILY: Partial<Record<ClientFormat, SignerFamily>> = { 'anthropic-messages': 'anthropic' };

export const markSignature = (raw: string, s: Signer): string => `${MARK}${s.family}:${encodeURIComponent(s.model ?? '')}:${raw}`;

/** The signer and raw value of a signature; `signer` is null for an unmarked (or unreadable) one. */
export function readSignature(sig: string): { signer: Signer | null; raw: string } {
  if (!sig.startsWith(MARK)) return { signer: null, raw: sig };
  const m = /^(anthropic|gemini):([^:]*):/.exec(sig.slice(MARK.length));
  if (m === null) return { signer: null, raw: sig };
  let model: string;
  try { model = decodeURIComponent(m[2]!); } catch { return { signer: null, raw: sig }; }
  return { signer: { family: m[1] as SignerFamily, ...(model !== '' ? { model } : {}) }, raw: sig.slice(MARK.length + m[0].length) };
}

/** A client's signature as the canonical model holds it: marked ones as they are, raw ones as `family`'s. */
export const qualifySignature = (sig: string, family: SignerFamily): string =>
  (sig === '' || sig.startsWith(MARK) ? sig : markSignature(sig, { family }));

/** Qualifies the raw signatures in a client's history as its own format's signer's. */
export function qualifyHistory(messages: Message[], format: ClientFormat): void {
  const family = CLIENT_FAMILY[format];
  if (family === undefined) return;
  for (const m of messages) for (const b of m.content) if (b.type === 'thinking') b.signature = qualifySignature(b.signature, family);
}

/**
 * The raw signature to send to `target`, or null when it was signed by someone else (or nobody
 * knows who: a raw signature in canonical form). A Gemini signature with no model goes to any Gemini model.
 */
export function signatureFor(sig: string, target: Signer): string | null {
  const { signer, raw } = readSignature(sig);
  if (signer === null || signer.family !== target.family) return null;
  if (target.family === 'gemini' && signer.model !== undefined && signer.model !== target.model) return null;
  return raw;
}

/** One adjustment for the signed thinking a target encoder left out, when it left any out. */
export function reportDropped(n: number, adjustments: string[]): void {
  if (n > 0) adjustments.push(`thinking=dropped(${n} block${n === 1 ? '' : 's'} signed by another model)`);
}

/** Whether answers of `signer` reach a `client` marked (a converted answer) or raw (its own format's). */
const needsMark = (signer: Signer | null, client: ClientFormat): signer is Signer => signer !== null && CLIENT_FAMILY[client] !== signer.family;

/** Marks the signatures of a whole answer in place. */
export function markResponse(res: CanonicalResponse, signer: Signer | null, client: ClientFormat): void {
  if (!needsMark(signer, client)) return;
  for (const b of res.content) if (b.type === 'thinking' && b.signature !== '' && !b.signature.startsWith(MARK)) b.signature = markSignature(b.signature, signer);
}

/** A per-stream marker of signature events (in place): the first piece of each block's signature. */
export function streamMarker(signer: Signer | null, client: ClientFormat): ((ev: StreamEvent) => void) | null {
  if (!needsMark(signer, client)) return null;
  const marked = new Set<number>();
  const mark = (index: number, sig: string): string => {
    if (sig === '' || marked.has(index)) return sig;
    marked.add(index);
    return markSignature(sig, signer);
  };
  return (ev) => {
    if (ev.type === 'message_start') marked.clear();
    else if (ev.type === 'block_start' && ev.block.type === 'thinking') ev.block = { ...ev.block, signature: mark(ev.index, ev.block.signature) };
    else if (ev.type === 'block_delta' && ev.delta.type === 'signature_delta') ev.delta = { ...ev.delta, signature: mark(ev.index, ev.delta.signature) };
  };
}

/**
 * A history as `target` takes it (the encoders' one step for signatures): each signed thinking block
 * unwrapped for its signer or left out when another model signed it, the drops reported once.
 * Unsigned thinking passes as it is; each target decides about it.
 */
export function ownThinking(messages: Message[], target: Signer, adjustments: string[]): Message[] {
  let dropped = 0;
  const out = messages.map((m) => (m.content.some((b) => b.type === 'thinking' && b.signature !== '') ? {
    ...m,
    content: m.content.flatMap((b) => {
      const sent = sendableThinking(b, target);
      if (sent === null) dropped++;
      return sent === null ? [] : [sent];
    }),
  } : m));
  reportDropped(dropped, adjustments);
  return out;
}

/** A thinking block's signature as `target` takes it: the raw value, or null (drop the block). Unsigned thinking passes as it is. */
export function sendableThinking(b: Block, target: Signer): Block | null {
  if (b.type !== 'thinking' || b.signature === '') return b;
  const raw = signatureFor(b.signature, target);
  return raw === null ? null : { ...b, signature: raw };
}
