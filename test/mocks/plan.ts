// The provider-neutral decision every mock makes: call tools or answer in text, with optional
// thinking, under stop sequences and max tokens. Each mock maps its wire format to and from it.
import {
  argsFromSchema, countWords, echoReply, finishText, thinkingText, toolResultReply, wantsBoth, wantsTool,
} from './text.ts';
import type { Generated } from './text.ts';

export interface ToolDef {
  name: string;
  schema: unknown;
}

export interface PlanInput {
  tools: ToolDef[];
  /** 'auto' (default), 'any' (must call some tool), 'none', or a forced tool name. */
  choice: 'auto' | 'any' | 'none' | { name: string };
  /** Text of the last user message (the prompt the reply echoes). */
  lastUser: string;
  /** Text of the tool result when the last message is one. */
  toolResult?: string;
  stop: readonly string[];
  maxTokens?: number;
  thinking: boolean;
  reply?: (lastUserText: string) => string;
}

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
  /** JSON text of args, as sent over the wire. */
  json: string;
}

export interface Plan {
  calls: PlannedCall[];
  /** Final text (empty when calling tools). */
  gen: Generated;
  /** Reasoning text, when thinking was asked for. */
  thinking?: string;
  /** Output tokens: words of thinking + text + each call's argument JSON (+1 per call). */
  outputTokens: number;
  thinkingTokens: number;
}

/**
 * Tools are called when some exist, the choice is not 'none', the last message is not a tool
 * result, and (the choice forces a call or the user says "weather"/"tool"). "both" calls the
 * first two tools (or the first twice) with argument variants 0 and 1.
 */
export function planReply(p: PlanInput): Plan {
  const forced = typeof p.choice === 'object' ? p.choice.name : undefined;
  let calls: PlannedCall[] = [];
  if (p.tools.length > 0 && p.choice !== 'none' && p.toolResult === undefined &&
      (p.choice === 'any' || forced !== undefined || wantsTool(p.lastUser))) {
    const first = p.tools.find((t) => t.name === forced) ?? p.tools[0]!;
    const picks = wantsBoth(p.lastUser) && forced === undefined ? [first, p.tools[1] ?? first] : [first];
    calls = picks.map((t, i) => {
      const raw = argsFromSchema(t.schema, i);
      const args = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
      return { name: t.name, args, json: JSON.stringify(args) };
    });
  }
  const thinking = p.thinking ? thinkingText(p.lastUser) : undefined;
  const thinkingTokens = thinking ? countWords(thinking) : 0;
  const raw = p.toolResult !== undefined ? toolResultReply(p.toolResult) : (p.reply ?? echoReply)(p.lastUser);
  const budget = p.maxTokens === undefined ? undefined : Math.max(0, p.maxTokens - thinkingTokens);
  const gen: Generated = calls.length > 0 ? { text: '', finish: 'stop' } : finishText(raw, p.stop, budget);
  const callTokens = calls.reduce((s, c) => s + countWords(c.json) + 1, 0);
  return { calls, gen, thinking, thinkingTokens, outputTokens: thinkingTokens + countWords(gen.text) + callTokens };
}
