// Text in the charsets some self-hosted servers and proxies answer in, for mock upstreams. Node's
// TextEncoder writes UTF-8 only: these encoders are built from TextDecoder's own tables (every byte,
// or every two-byte sequence for Shift_JIS), so what they write is what a decoder of that charset reads.

const tableOf = (label: string, codes: number[][]): Map<string, Buffer> => {
  const d = new TextDecoder(label, { fatal: true });
  const map = new Map<string, Buffer>();
  for (const seq of codes) {
    let ch: string;
    try { ch = d.decode(Uint8Array.from(seq)); } catch { continue; }
    if (ch.length > 0 && !map.has(ch)) map.set(ch, Buffer.from(seq));
  }
  return map;
};

const tables = new Map<string, Map<string, Buffer>>();

function table(label: string): Map<string, Buffer> {
  let t = tables.get(label);
  if (t) return t;
  const codes: number[][] = [];
  for (let b = 0; b < 0x100; b++) codes.push([b]);
  if (label === 'shift_jis') {
    for (let lead = 0x81; lead <= 0xfc; lead++) {
      if (lead > 0x9f && lead < 0xe0) continue;
      for (let trail = 0x40; trail <= 0xfc; trail++) if (trail !== 0x7f) codes.push([lead, trail]);
    }
  }
  t = tableOf(label, codes);
  tables.set(label, t);
  return t;
}

/** `text` in `label`: utf-8, utf-16le, utf-16be, or a single- or double-byte charset TextDecoder reads (windows-1252, shift_jis). */
export function encodeText(text: string, label: string): Buffer {
  if (label === 'utf-8') return Buffer.from(text, 'utf8');
  if (label === 'utf-16le') return Buffer.from(text, 'utf16le');
  if (label === 'utf-16be') return Buffer.from(text, 'utf16le').swap16();
  const t = table(label);
  return Buffer.concat([...text].map((ch) => {
    const b = t.get(ch);
    if (!b) throw new Error(`${JSON.stringify(ch)} has no encoding in ${label}`);
    return b;
  }));
}

export const BOM = { 'utf-8': Buffer.from([0xef, 0xbb, 0xbf]), 'utf-16le': Buffer.from([0xff, 0xfe]), 'utf-16be': Buffer.from([0xfe, 0xff]) } as const;

