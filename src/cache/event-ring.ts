/**
 * A bounded ring of recent cache events. It always holds every event with a
 * revision in (startRevision, newest]; evicting the oldest event moves
 * startRevision up to it. Storage grows on demand up to the capacity, so the
 * many idle resources of a server with thousands of CRDs cost next to nothing.
 */
const INITIAL_SLOTS = 16;

export class EventRing<E extends { revision: number }> {
  private items: (E | undefined)[] = [];
  private head = 0; // index of the oldest event
  private size = 0;

  constructor(private readonly capacity: number, public startRevision: number) {}

  push(event: E): void {
    if (this.size === this.items.length && this.items.length < this.capacity) this.grow();
    if (this.size === this.capacity) {
      this.startRevision = this.items[this.head]!.revision;
      this.items[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
    }
    this.items[(this.head + this.size) % this.items.length] = event;
    this.size++;
  }

  /** Events with a revision greater than `revision`, oldest first. */
  after(revision: number): E[] {
    const out: E[] = [];
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.size; i++) out.push(this.at(i));
    return out;
  }

  /** Forget everything and start a new window at `revision`. */
  reset(revision: number): void {
    this.items = [];
    this.head = 0;
    this.size = 0;
    this.startRevision = revision;
  }

  /** Double the slots (up to the capacity), unrolling the ring so the oldest event is first. */
  private grow(): void {
    const slots = Math.min(this.capacity, Math.max(INITIAL_SLOTS, this.items.length * 2));
    const next = new Array<E | undefined>(slots);
    for (let i = 0; i < this.size; i++) next[i] = this.at(i);
    this.items = next;
    this.head = 0;
  }

  private at(i: number): E {
    return this.items[(this.head + i) % this.items.length]!;
  }
}
