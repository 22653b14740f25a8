// The wire formats the gateway speaks, by name. Adding a format is one codec module and one line here.
import type { Codec, WireFormat } from './codec.ts';
import { openaiChatCodec } from './openai-chat/index.ts';
import { anthropicMessagesCodec } from './anthropic-messages/index.ts';
import { geminiCodec } from './gemini/index.ts';
import { bedrockCodec } from './bedrock/index.ts';
import { openaiChatPassthrough } from './passthrough/openai-chat.ts';
import { anthropicMessagesPassthrough } from './passthrough/anthropic-messages.ts';

export const CODECS: Record<WireFormat, Codec> = {
  'openai-chat': { ...openaiChatCodec, passthrough: openaiChatPassthrough },
  'anthropic-messages': { ...anthropicMessagesCodec, passthrough: anthropicMessagesPassthrough },
  'gemini': geminiCodec,
  'bedrock-converse': bedrockCodec,
};

export const codecFor = (f: WireFormat): Codec => CODECS[f];
