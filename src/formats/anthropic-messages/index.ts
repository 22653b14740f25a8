// The Anthropic Messages codec, both as the client format (/v1/messages) and as the wire format
// of Anthropic upstreams.
import type { Codec } from '../codec.ts';
import { decodeMessagesRequest } from './decode-request.ts';
import { encodeMessagesRequest } from './encode-request.ts';
import { decodeAnthropicError } from './errors.ts';
import { decodeMessagesResponse, encodeMessagesResponse } from './response.ts';
import { createMessagesStreamDecoder } from './stream-decoder.ts';
import { createMessagesStreamEncoder } from './stream-encoder.ts';

export const anthropicMessagesCodec: Codec = {
  format: 'anthropic-messages',
  client: {
    decodeRequest: decodeMessagesRequest,
    encodeResponse: encodeMessagesResponse,
    // Usage is always part of the Messages stream, so the option changes nothing here.
    newStreamEncoder: () => createMessagesStreamEncoder(),
  },
  upstream: {
    encodeRequest: encodeMessagesRequest,
    decodeResponse: decodeMessagesResponse,
    newStreamDecoder: createMessagesStreamDecoder,
    decodeError: decodeAnthropicError,
  },
};

export { validateMessagesRequest } from './validate.ts';
export { ANTHROPIC_ERROR_TYPES } from './errors.ts';
export { DEFAULT_MAX_TOKENS } from './encode-request.ts';
