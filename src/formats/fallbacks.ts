// What encoders do when the target lacks a feature the client used, instead of refusing a request a
// standard client sends: structured output as an instruction, mid-conversation system turns moved
// into the system prompt. Each use is reported by the caller in x-gateway-adjustments.
import type { Message, ResponseFormat, TextBlock } from './canonical.ts';

/** JSON mode has no switch on some targets; this instruction is appended to the system prompt. */
export const JSON_MODE_INSTRUCTION = 'Respond with a single valid JSON object and nothing else.';

/** The instruction that stands in for a response format the target cannot enforce. */
export function formatInstruction(rf: Extract<ResponseFormat, { type: 'json_object' | 'json_schema' }>): string {
  if (rf.type === 'json_object') return JSON_MODE_INSTRUCTION;
  return `Respond with a single valid JSON value that conforms to this JSON Schema, and nothing else:\n${JSON.stringify(rf.schema)}`;
}

/**
 * Splits mid-conversation system turns out of the history for targets whose only system slot is
 * the top-level one. The gateway asks for the conversation's next turn only, so instructions given
 * before that turn take effect the same from the system prompt; their text follows the opening
 * prompt in order. `adjustments` gets one item per moved turn.
 */
export function hoistSystemTurns(messages: readonly Message[], adjustments: string[], to: string): { system: TextBlock[]; messages: Message[] } {
  if (!messages.some((m) => m.role === 'system')) return { system: [], messages: messages as Message[] };
  const system: TextBlock[] = [];
  const rest: Message[] = [];
  messages.forEach((m, i) => {
    if (m.role !== 'system') return void rest.push(m);
    for (const b of m.content) if (b.type === 'text') system.push({ type: 'text', text: b.text });
    adjustments.push(`messages[${i}].role=system->${to}`);
  });
  return { system, messages: rest };
}
