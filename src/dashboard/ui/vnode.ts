// Virtual SVG nodes: charts are built as plain data (no DOM), so node:test checks them without a
// browser and the root type check needs no DOM types; dom.ts materialises them.

/** A virtual SVG node: charts are built as plain data (unit-tested without a browser), then materialised. */
export type VNode = { tag: string; attrs: Record<string, string | number>; children: Array<VNode | string> };

export const v = (tag: string, attrs: Record<string, string | number> = {}, ...children: Array<VNode | string | null | false>): VNode =>
  ({ tag, attrs, children: children.filter((c): c is VNode | string => c !== null && c !== false) });
