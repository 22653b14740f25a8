// The OpenAI chat-completions codec, both as the client format (/v1/chat/completions) and as the
// wire format of OpenAI and OpenAI-compatible upstreams.
import type { Codec } from '../codec.ts';
import { decodeChatRequest } from './decode-request.ts';
import { encodeChatRequest } from './encode-request.ts';
import { decodeOpenAIError } from './errors.ts';
import { decodeChatResponse, encodeChatResponse } from './response.ts';
import { createChatStreamDecoder } from './stream-decoder.ts';
import { createChatStreamEncoder } from './stream-encoder.ts';

export const openaiChatCodec: Codec = {
  format: 'openai-chat',
  client: {
    decodeRequest: decodeChatRequest,
    encodeResponse: (res) => encodeChatResponse(res),
    newStreamEncoder: (opts) => createChatStreamEncoder(opts),
  },
  upstream: {
    encodeRequest: encodeChatRequest,
    decodeResponse: decodeChatResponse,
    newStreamDecoder: createChatStreamDecoder,
    decodeError: decodeOpenAIError,
  },
};

export { validateChatRequest } from './validate.ts';
export { OPENAI_ERROR_TYPES } from './errors.ts';
export { kindFromStatus } from '../errors.ts';
