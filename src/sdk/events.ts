/**
 * An event recorder, as client-go's events.k8s.io/v1 recorder: an Event about an object (`regarding`) with
 * its type, reason, action and note, reported by this controller. The same event again within six minutes
 * becomes a series (count and last observed time) on the first one rather than a new Event. Recording
 * never throws: an event that cannot be written is logged and dropped.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { toMicroTime } from '../machinery/time.js';
import type { KObject } from '../api/object.js';
import type { Client, ResourceClient } from './client.js';
import type { KubeObject } from './resource.js';

const SERIES_WINDOW_MS = 6 * 60 * 1000;
const MAX_TRACKED = 4096;

/** Who reports the events of an EventRecorder. */
export interface EventRecorderOptions {
  /** reportingController, e.g. `foo.example.com/foo-controller`. */
  controller: string;
  /** reportingInstance (default: `<controller>-<host>`). */
  instance?: string;
  /** Where events that could not be written are reported (default: stderr). */
  log?: (message: string) => void;
}

/**
 * Records events.k8s.io/v1 Events about objects, as client-go's events.EventRecorder; repeats within six
 * minutes are counted as a series. Never throws.
 */
export class EventRecorder {
  private readonly events: ResourceClient;
  private readonly instance: string;
  private readonly log: (message: string) => void;
  /** Recent events by what they say: where a repeat is counted. */
  private readonly recent = new Map<string, { namespace: string; name: string; count: number; first: number }>();

  constructor(client: Client, private readonly opts: EventRecorderOptions) {
    this.events = client.resource({ group: 'events.k8s.io', version: 'v1', resource: 'events' });
    this.instance = opts.instance ?? `${opts.controller}-${hostname()}`;
    this.log = opts.log ?? ((m) => process.stderr.write(`${m}\n`));
  }

  /**
   * Records an event about `regarding` (type Normal or Warning), in its namespace (`default` for a
   * cluster-scoped object): `reason` (a word, e.g. `Created`), `action` (what was done or failed,
   * e.g. `Reconcile`) and `note` (free text, cut to 1 KiB). Resolves when written, or dropped and logged.
   */
  async record(regarding: KubeObject | KObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    const m = regarding.metadata ?? {};
    const namespace = m.namespace || 'default';
    const now = Date.now();
    const key = JSON.stringify([m.uid, namespace, m.name, type, reason, action, note]);
    const seen = this.recent.get(key);
    try {
      if (seen && now - seen.first < SERIES_WINDOW_MS) {
        seen.count++;
        await this.events.patch(seen.namespace, seen.name, { series: { count: seen.count, lastObservedTime: toMicroTime(new Date(now)) } });
        return;
      }
      const name = `${m.name ?? 'object'}.${randomBytes(8).toString('hex')}`;
      await this.events.create(namespace, {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace },
        eventTime: toMicroTime(new Date(now)),
        reportingController: this.opts.controller,
        reportingInstance: this.instance,
        action,
        reason,
        note: truncateBytes(note, 1024),
        type,
        regarding: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          name: m.name,
          ...(m.namespace ? { namespace: m.namespace } : {}),
          ...(m.uid ? { uid: m.uid } : {}),
          ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
        },
      });
      if (this.recent.size >= MAX_TRACKED) this.recent.clear();
      this.recent.set(key, { namespace, name, count: 1, first: now });
    } catch (err) {
      this.log(`event recorder ${this.opts.controller}: ${reason} for ${m.name}: ${(err as Error)?.message ?? String(err)}`);
    }
  }
}

/** At most `max` bytes of UTF-8, never half a character (events.k8s.io's note limit is in bytes). */
function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > max) break;
    out += ch;
  }
  return out;
}
