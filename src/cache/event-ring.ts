/**
 * A bounded ring of recent cache events. It always holds every event with a
 * revision in (startRevision, newest]; evicting the oldest event moves
 * startRevision up to it.
 */
export class EventRing<E extends { revision: number }> {
  private readonly items: (E | undefined)[];
  private head = 0; // index of the oldest event
  private size = 0;

  constructor(private readonly capacity: number, public startRevision: number) {
    this.items = new Array(capacity);
  }

  push(event: E): void {
    if (this.size === this.capacity) {
      this.startRevision = this.items[this.head]!.revision;
      this.items[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
    }
    this.items[(this.head + this.size) % this.capacity] = event;
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
    this.items.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.startRevision = revision;
  }

  private at(i: number): E {
    return this.items[(this.head + i) % this.capacity]!;
  }
}
