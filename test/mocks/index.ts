// Entry point of the mock upstream providers used by the gateway's tests: one import for all four
// mocks, their shared types, and the rules that make their replies predictable.
//
// Every mock listens on 127.0.0.1:0 (keep-alive on), records each request (method, path with
// query, headers, parsed JSON body or raw text, time) and never imports from src/: the mocks are
// the reference the gateway's codecs are tested against.
//
// Deterministic behaviour, the same in all four wire formats:
// - Reply text: `Echo: ` + the first 40 characters of the last user message's text (or
//   `opts.reply(lastUserText)`). After a tool result: `The tool returned: <first 60 chars>`.
// - Input tokens: ceil(characters / 4) of all input text, the pieces joined by `\n` in prompt
//   order (tool definitions as `name description <canonical JSON schema>`, system, then messages;
//   tool calls as their argument JSON, tool results as their text or canonical JSON).
// - Output tokens: words of the output text, plus words of the thinking text, plus for each
//   tool call the words of its argument JSON + 1. OpenAI adds reasoning tokens on top.
// - Tool calls: when tools are declared and the tool choice forces one (OpenAI `required` or a
//   named function, Anthropic `any`/`tool`, Gemini mode ANY, Bedrock `any`/`tool`) or the last user
//   message contains the word "weather" or "tool"; never after a tool result or with choice none.
//   The first (or forced) tool is called with arguments generated from its JSON Schema
//   (location/city -> "Paris", unit -> "celsius", enums -> first value, numbers 1, booleans true).
//   The word "both" makes two parallel calls: the first two tools (or the first twice), the second
//   with variant arguments ("London", second enum value, 2).
// - Thinking: Anthropic `thinking.type: 'enabled'`, Gemini `thinkingConfig.includeThoughts`,
//   Bedrock `additionalModelRequestFields.thinking.type: 'enabled'` give the text
//   `Let me think about "<first 40 chars>" step by step before answering.` with a signature
//   (base64 SHA-256). OpenAI `reasoning_effort` minimal/low/medium/high reports 8/16/64/256
//   reasoning tokens (included in completion_tokens).
// - Caching: OpenAI and Gemini cache automatically: prompts of >= 1024 tokens store prefixes at
//   1024 + k*128 tokens and a later prompt sharing one reports the longest as cached. Anthropic
//   (cache_control) and Bedrock (cachePoint) cache each breakpoint's prefix of >= 1024 tokens
//   (>= 2048 when the model name contains "haiku"): written on first sight, read after; input
//   tokens exclude read and written tokens. Caches are per mock and per model; reset() clears.
// - Stop sequences cut the text at the earliest match (OpenAI `stop`, Anthropic `stop_sequence`,
//   Gemini STOP, Bedrock `stop_sequence`); max tokens keep that many words (length, max_tokens,
//   MAX_TOKENS, max_tokens).
// - Streams split text into deltas of about two words and tool arguments into three pieces.
//
// Faults (see faults.ts) are queued with `mock.fault(...)` and consumed one per request, or sent
// per request as the header `x-mock-fault: <JSON Fault>` (which leaves the queue untouched).
// A fault applies before auth. `status` answers in the provider's error shape (a string `body`
// goes out raw, e.g. an HTML proxy page); `disconnectAfterChunks`/`stallAfterChunks` count SSE
// events or event-stream frames (on a JSON reply: half the body, then drop or stall);
// `malformedSse` adds one invalid-JSON event after the first (a JSON reply becomes invalid JSON).
//
// Base URLs: OpenAI `http://127.0.0.1:PORT/v1`, Anthropic `http://127.0.0.1:PORT/v1` (the
// Anthropic SDK wants the bare origin), Gemini `http://127.0.0.1:PORT/v1beta`, Bedrock the origin.
export { startMockOpenAI, startMockAzureOpenAI, startMockMistral, OPENAI_MODELS } from './openai.ts';
export { startMockAnthropic } from './anthropic.ts';
export { startMockGemini, GEMINI_MODELS } from './gemini.ts';
export { startMockBedrock } from './bedrock.ts';
export { FAULT_HEADER } from './faults.ts';
export type { Fault } from './faults.ts';
export type { MockOptions, MockUpstream, RecordedRequest } from './server.ts';
export { decodeFrames, encodeFrame } from './eventstream.ts';
export { embeddingFor } from './openai-embeddings.ts';
export { estimateTokens, countWords } from './text.ts';
