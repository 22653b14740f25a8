// Gemini thought signatures in Chat Completions, where Google's OpenAI-compatible endpoint carries
// them: on the tool call they belong to, `extra_content.google.thought_signature`. A translated
// answer's signature goes out there marked with its model (src/formats/signatures.ts), comes back
// there in the client's assistant tool_calls, and is never relayed marked to a Chat provider.
import type { Block } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { qualifySignature, readSignature, reportDropped, signatureFor } from '../signatures.ts';

type Rec = Record<string, unknown>;

/**
 * What a tool call carries of the signature just before it: a Gemini signature rides along so the
 * client's next turn can give it back. Other signatures (Claude's thinking) have no place in a chat completion.
 */
export function callExtra(signature: string): { extra_content?: Rec } {
  return signature !== '' && readSignature(signature).signer?.family === 'gemini' ? { extra_content: { google: { thought_signature: signature } } } : {};
}

const signatureOf = (call: Rec): unknown =>
  (isRecord(call.extra_content) && isRecord(call.extra_content.google) ? call.extra_content.google.thought_signature : undefined);

/**
 * A client's tool call signature as canonical content: the empty thinking block before the call that
 * the Gemini codec reattaches to the function call. A raw one is Gemini's (of the model it came from).
 */
export function callSignature(call: Rec): Block[] {
  const sig = signatureOf(call);
  return typeof sig === 'string' && sig !== '' ? [{ type: 'thinking', thinking: '', signature: qualifySignature(sig, 'gemini') }] : [];
}

/**
 * A relayed body's tool calls with the signatures the gateway marked: unwrapped for the model they
 * came from (a Chat provider serving that Gemini model), else left out (reported). Raw ones, which
 * the provider itself gave the client, and bodies without marked ones are untouched.
 */
export function relayCallSignatures(messages: unknown[], upstreamModel: string, adjustments?: string[]): unknown[] {
  const marked = (c: unknown): boolean => isRecord(c) && typeof signatureOf(c) === 'string' && readSignature(signatureOf(c) as string).signer !== null;
  const hasMarked = (m: unknown): boolean => isRecord(m) && Array.isArray(m.tool_calls) && m.tool_calls.some(marked);
  // Every plain Chat Completions relay passes here: a body without marked signatures is not copied.
  if (!messages.some(hasMarked)) return messages;
  let dropped = 0;
  const out = messages.map((m) => {
    if (!isRecord(m) || !hasMarked(m)) return m;
    const tool_calls = (m.tool_calls as unknown[]).map((c) => {
      if (!marked(c)) return c;
      const call = c as Rec;
      const raw = signatureFor(signatureOf(call) as string, { family: 'gemini', model: upstreamModel });
      const google = { ...(call.extra_content as { google: Rec }).google };
      if (raw === null) { delete google.thought_signature; dropped++; } else google.thought_signature = raw;
      const { extra_content: extra, ...rest } = call;
      const others: Rec = { ...(extra as Rec), google };
      if (Object.keys(google).length === 0) delete others.google;
      return Object.keys(others).length === 0 ? rest : { ...rest, extra_content: others };
    });
    return { ...m, tool_calls };
  });
  reportDropped(dropped, adjustments ?? []);
  return out;
}
