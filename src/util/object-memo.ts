/**
 * A value remembered per object, kept on the object itself under a symbol of its own that is not enumerable: JSON,
 * spreads, `Object.keys`, `structuredClone` and deep comparisons do not see it, and it goes with the object.
 *
 * A WeakMap does the same, but one that takes an entry for each object written keeps the entries of dead objects
 * until a full collection, and when it grows it rehashes them all: with a million objects written, one `set` held
 * the event loop 50–120 ms now and then (V8 11). Objects that take no new property (frozen ones) use a WeakMap.
 */
export class ObjectMemo<K extends object, V> {
  private readonly key: symbol;
  private readonly fallback = new WeakMap<K, V>();

  constructor(name: string) {
    this.key = Symbol(name);
  }

  get(obj: K): V | undefined {
    const own = (obj as Record<symbol, V | undefined>)[this.key];
    // An object that takes no new property (frozen, maybe after it had one) keeps its value aside.
    return Object.isExtensible(obj) ? own : (this.fallback.get(obj) ?? own);
  }

  /** Remembers `value` (not undefined) for the object. */
  set(obj: K, value: V): void {
    if (!Object.isExtensible(obj)) this.fallback.set(obj, value);
    else if (Object.prototype.hasOwnProperty.call(obj, this.key)) (obj as Record<symbol, V>)[this.key] = value;
    else Object.defineProperty(obj, this.key, { value, writable: true, configurable: true, enumerable: false });
  }
}
