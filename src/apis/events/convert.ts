/**
 * Events are one resource served by two groups, as upstream stores them: `events.k8s.io/v1` Events
 * are core/v1 Events (the storage form) with other field names (pkg/apis/events/v1's conversion):
 * regarding/involvedObject, note/message, reportingController/reportingComponent, and the
 * deprecated* fields of the older series model.
 */
import type { KObject } from '../../api/object.js';

/** events.k8s.io/v1 field → core/v1 field; the fields of both with one name map to themselves. */
const TO_CORE: Readonly<Record<string, string>> = {
  eventTime: 'eventTime',
  series: 'series',
  reportingController: 'reportingComponent',
  reportingInstance: 'reportingInstance',
  action: 'action',
  reason: 'reason',
  regarding: 'involvedObject',
  related: 'related',
  note: 'message',
  type: 'type',
  deprecatedSource: 'source',
  deprecatedFirstTimestamp: 'firstTimestamp',
  deprecatedLastTimestamp: 'lastTimestamp',
  deprecatedCount: 'count',
};
const TO_EVENTS: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(TO_CORE).map(([k, v]) => [v, k]));

function renamed(obj: KObject, names: Readonly<Record<string, string>>, apiVersion: string): KObject {
  const out: KObject = { kind: 'Event', apiVersion, metadata: obj.metadata };
  for (const [key, value] of Object.entries(obj)) {
    const to = Object.hasOwn(names, key) ? names[key] : undefined;
    if (to !== undefined) out[to] = value;
  }
  return out;
}

/** A stored (core/v1) Event as events.k8s.io/v1 serves it. */
export const eventToEventsV1 = (core: KObject): KObject => renamed(core, TO_EVENTS, 'events.k8s.io/v1');

/** An events.k8s.io/v1 Event in its storage form (core/v1). */
export const eventsV1ToCore = (event: KObject): KObject => renamed(event, TO_CORE, 'v1');
