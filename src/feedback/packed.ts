// Columnar wire form of flattened events, for the trip back from the worker. Structured clone of
// thousands of small objects costs the main thread more than flattening inline; one JSON string
// of flat columns (names and tags deduplicated) clones as a memcpy and parses in a third of that.
import type { MetricType } from '../store/types.ts';
import type { FlatEntry, FlatEvent } from './flatten.ts';

type Columns = {
  /** Per event: inference id, or the error message when `n` is -1. */
  head: string[];
  /** Per event: entry count, -1 for a failed event. */
  n: number[];
  /** Per event: index into `tagTable`. */
  tag: number[];
  /** Per event: 'M' (max), 'm' (min) or '_' (not given), one character each. */
  opt: string;
  tagTable: string[];
  names: string[];
  /** Per entry: index into `names`. */
  name: number[];
  /** Per entry: 'b', 'f' or 'c', one character each. */
  type: string;
  value: string[];
  reason: Array<string | null>;
};

const TYPE_CODE: Record<MetricType, string> = { boolean: 'b', float: 'f', comment: 'c' };
const CODE_TYPE: Record<string, MetricType> = { b: 'boolean', f: 'float', c: 'comment' };

function interner(table: string[]): (s: string) => number {
  const index = new Map<string, number>();
  return (s) => {
    let i = index.get(s);
    if (i === undefined) { i = table.length; table.push(s); index.set(s, i); }
    return i;
  };
}

export function packEvents(events: FlatEvent[]): string {
  const c: Columns = { head: [], n: [], tag: [], opt: '', tagTable: [], names: [], name: [], type: '', value: [], reason: [] };
  const tagIndex = interner(c.tagTable);
  const nameIndex = interner(c.names);
  let opt = '';
  let type = '';
  for (const ev of events) {
    if (!ev.ok) {
      c.head.push(ev.message); c.n.push(-1); c.tag.push(-1); opt += '-';
      continue;
    }
    c.head.push(ev.id); c.n.push(ev.entries.length); c.tag.push(tagIndex(JSON.stringify(ev.tags)));
    opt += ev.optimize === 'max' ? 'M' : ev.optimize === 'min' ? 'm' : '_';
    for (const e of ev.entries) {
      c.name.push(nameIndex(e.metric)); type += TYPE_CODE[e.type]; c.value.push(e.value); c.reason.push(e.reason);
    }
  }
  c.opt = opt;
  c.type = type;
  return JSON.stringify(c);
}

/**
 * Rebuilds the events packEvents was given. Events with equal tags share one tags object:
 * rows treat tags as read-only.
 */
export function unpackEvents(packed: string): FlatEvent[] {
  const c = JSON.parse(packed) as Columns;
  const tags = c.tagTable.map((t) => JSON.parse(t) as Record<string, string>);
  const out: FlatEvent[] = new Array(c.head.length);
  let k = 0;
  for (let i = 0; i < c.head.length; i++) {
    const n = c.n[i]!;
    if (n < 0) { out[i] = { ok: false, message: c.head[i]! }; continue; }
    const entries: FlatEntry[] = new Array(n);
    for (let j = 0; j < n; j++, k++) {
      entries[j] = { metric: c.names[c.name[k]!]!, type: CODE_TYPE[c.type[k]!]!, value: c.value[k]!, reason: c.reason[k]! };
    }
    out[i] = { ok: true, id: c.head[i]!, entries, tags: tags[c.tag[i]!]!, optimize: c.opt[i] === 'M' ? 'max' : c.opt[i] === 'm' ? 'min' : null };
  }
  return out;
}
