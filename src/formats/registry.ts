// The wire formats the gateway speaks, by name. Adding a format is one codec module and one line here.
import type { ClientCodec, ClientFormat, Codec, PassthroughCodec, WireFormat } from './codec.ts';
import { openaiChatCodec } from './openai-chat/index.ts';
import { anthropicMessagesCodec } from './anthropic-messages/index.ts';
import { geminiCodec } from './gemini/index.ts';
import { bedrockCodec } from './bedrock/index.ts';
import { openaiChatPassthrough } from './passthrough/openai-chat.ts';
import { anthropicMessagesPassthrough } from './passthrough/anthropic-messages.ts';
import { openaiResponsesClient } from './openai-responses/index.ts';
import { openaiResponsesPassthrough } from './openai-responses/passthrough.ts';

export const CODECS: Record<WireFormat, Codec> = {
  'openai-chat': { ...openaiChatCodec, passthrough: openaiChatPassthrough },
  'anthropic-messages': { ...anthropicMessagesCodec, passthrough: anthropicMessagesPassthrough },
  'gemini': geminiCodec,
  'bedrock-converse': bedrockCodec,
};

export const codecFor = (f: WireFormat): Codec => CODECS[f];

/** Client formats no provider speaks: served by translation to every target. */
const CLIENT_ONLY: Record<Exclude<ClientFormat, WireFormat>, ClientCodec> = {
  'openai-responses': openaiResponsesClient,
};

/** Every client format's codec, in one table so the request path does a single property read. */
const CLIENT_CODECS = {
  ...Object.fromEntries(Object.values(CODECS).flatMap((c) => (c.client ? [[c.format, c.client]] : []))),
  ...CLIENT_ONLY,
} as Record<ClientFormat, ClientCodec>;

/** The client codec of a format the gateway serves (every client format has one). */
export const clientCodecFor = (f: ClientFormat): ClientCodec => CLIENT_CODECS[f];

/** Same-format relays of the client-only formats, for providers that serve them natively. */
const CLIENT_ONLY_RELAY: Record<Exclude<ClientFormat, WireFormat>, PassthroughCodec> = {
  'openai-responses': openaiResponsesPassthrough,
};

/**
 * The relay for a client format on a provider, or undefined when the request must be translated:
 * the provider speaks the client's format (its own `format`), or serves it natively too (`native`).
 */
export function relayCodecFor(p: { format: WireFormat; native: Partial<Record<ClientFormat, string>> }, client: ClientFormat): PassthroughCodec | undefined {
  if (p.native[client] !== undefined) return Object.hasOwn(CLIENT_ONLY_RELAY, client) ? CLIENT_ONLY_RELAY[client as keyof typeof CLIENT_ONLY_RELAY] : CODECS[client as WireFormat].passthrough;
  return p.format === client ? CODECS[p.format].passthrough : undefined;
}
