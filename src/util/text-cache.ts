// Values remembered per text (a token count, an estimate, a line count), bounded by the characters of
// the texts held: a conversation resends its earlier turns, so each is worked out once; past the bound
// the cache starts over (the next request pays once more). Keys are the texts themselves: a hit costs
// hashing and comparing the string, far less than the work it saves.
export class TextCache<V> {
  readonly #map = new Map<string, V>();
  #chars = 0;
  readonly #maxChars: number;

  constructor(maxChars: number) { this.#maxChars = maxChars; }

  get(s: string): V | undefined { return this.#map.get(s); }

  has(s: string): boolean { return this.#map.has(s); }

  set(s: string, v: V): void {
    if (!this.#map.has(s)) {
      if (this.#chars + s.length > this.#maxChars) { this.#map.clear(); this.#chars = 0; }
      this.#chars += s.length;
    }
    this.#map.set(s, v);
  }
}
