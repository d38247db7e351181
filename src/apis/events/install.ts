/** The events.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { eventPrinter } from '../../printing/index.js';
import { res, type BuiltinResource } from '../resource-table.js';
import { eventToEventsV1, eventsV1ToCore } from './convert.js';

/** The resources of events.k8s.io kapi serves. */
export const EVENTS_RESOURCES: BuiltinResource[] = [
  res('events.k8s.io', 'v1', 'events', 'Event', true, { printer: eventPrinter,
    shortNames: ['ev'],
    storedAs: { group: '', resource: 'events', toVersion: eventToEventsV1, toStorage: eventsV1ToCore },
  }),
];
