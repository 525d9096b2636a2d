/**
 * What an isolate remembers between the requests it serves, each entry until a given time.
 * Bounded, because one isolate serves every caller, an attacker's random keys included: when
 * full, the entry set longest ago is forgotten first.
 */
export class IsolateMemory<K, V> {
  readonly #entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly capacity: number) {}

  /** The value, while its time has not come. */
  get(key: K, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: K, value: V, until: number) {
    this.#entries.delete(key);
    if (this.#entries.size >= this.capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, until });
  }
}
