// How far a budget reservation's text figure (src/tokens/estimate.ts reserveTextTokens: the estimate
// with its per-class margin, never above the UTF-8 bytes + 1) stays above the real count, per kind of
// text: reserved/real min and median against o200k_base and, when its path is given, Claude 2's public
// tokenizer (the npm package @anthropic-ai/tokenizer, not a dependency: install it elsewhere and pass
// CLAUDE_TOKENIZER=/path/to/node_modules/@anthropic-ai/tokenizer). "before": the estimate x 1.36.
// Run: node bench/reservation-margin.ts (from the repository root).
import { createRequire } from 'node:module';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { ESTIMATE_MARGIN, estimateShape, reserveTextTokens, textShape } from '../src/tokens/estimate.ts';
import { textSample } from './lib/text-sample.ts';

const claudePath = process.env.CLAUDE_TOKENIZER;
const claude = claudePath ? (createRequire(import.meta.url)(claudePath) as { countTokens: (s: string) => number }).countTokens : null;
const kindOf = (k: string): string => (k.startsWith('lang:') ? (/^(zh|ja|ko)/.test(k.slice(5)) ? 'lang:cjk' : 'lang:other') : k);
const rows = textSample({ emoji: true }).map((s) => {
  const shape = textShape(s.text);
  const bytes = Buffer.byteLength(s.text);
  return {
    kind: kindOf(s.kind), o200k: countTokens(s.text), claude: claude ? claude(s.text) : 0,
    before: Math.min(Math.ceil(estimateShape(shape) * ESTIMATE_MARGIN), bytes + 1), after: reserveTextTokens(shape, bytes),
  };
});
const kinds = [...new Set(rows.map((r) => r.kind))].sort();
const stat = (xs: number[]): string => { xs.sort((a, b) => a - b); return `min ${xs[0]!.toFixed(2)} median ${xs[Math.floor(xs.length / 2)]!.toFixed(2)}`; };
console.log(`texts: ${rows.length}; reserved/real`);
for (const truth of ['o200k', ...(claude ? ['claude'] : [])] as Array<'o200k' | 'claude'>) {
  for (const k of [...kinds, 'all']) {
    const rs = rows.filter((r) => k === 'all' || r.kind === k);
    console.log(`${truth.padEnd(7)} ${k.padEnd(13)} (${String(rs.length).padStart(4)}) before ${stat(rs.map((r) => r.before / r[truth]))}   after ${stat(rs.map((r) => r.after / r[truth]))}`);
  }
}
