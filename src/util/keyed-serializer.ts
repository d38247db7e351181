/**
 * Runs work for one key at a time: a call for a key waits for the calls before
 * it, while different keys run concurrently. Reconcilers use it so that one
 * object is never reconciled twice at once.
 */
export class KeyedSerializer {
  private readonly chains = new Map<string, Promise<void>>();

  constructor(private readonly onError: (key: string, err: unknown) => void) {}

  run(key: string, work: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(work).catch((err) => this.onError(key, err));
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }
}
