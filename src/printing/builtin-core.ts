/**
 * Printers of the simple built-in resources, as kube-apiserver's printers show
 * them (always in wide form; kubectl hides priority > 0 columns unless `-o wide`):
 * Namespace, ConfigMap, Secret, ServiceAccount, Service, Endpoints, Event
 * (core/v1 and events.k8s.io/v1), Lease; and rest.NewDefaultTableConvertor
 * (Name, Created At) for resources without a printer.
 */
import type { KObject } from '../api/object.js';
import { createdAtCell, timestampMillis, translateTimestampSince } from './duration.js';
import { age, ageColumn, column, docColumn, fieldDoc, formatLabels, int, list, nameColumn, nameOf, printer, record, str } from './printer-helpers.js';
import type { TableConvertor } from './types.js';

/** rest.NewDefaultTableConvertor: Name and the RFC 3339 creation time ("Created At", type date). */
export function defaultTableConvertor(): TableConvertor {
  return {
    columns: [nameColumn(), column('Created At', 'date', fieldDoc('meta/v1.ObjectMeta', 'creationTimestamp'))],
    row: (obj) => ({ cells: [nameOf(obj), createdAtCell(obj.metadata?.creationTimestamp)] }),
    nilRowsWhenEmpty: true,
  };
}

export const namespacePrinter = (): TableConvertor =>
  printer([nameColumn(), column('Status', 'string', 'The status of the namespace'), ageColumn()], (o, now) => [
    nameOf(o),
    str(o.status?.phase),
    age(o, now),
  ]);

export const configMapPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Data', 'string', 'core/v1.ConfigMap', 'data'), ageColumn()], (o, now) => [
    nameOf(o),
    Object.keys(record(o.data)).length + Object.keys(record(o.binaryData)).length,
    age(o, now),
  ]);

// The stored v1 Secret may still carry stringData; upstream merges it into data on write.
export const secretPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Type', 'string', 'core/v1.Secret', 'type'), docColumn('Data', 'string', 'core/v1.Secret', 'data'), ageColumn()], (o, now) => [
    nameOf(o),
    str(o.type),
    new Set([...Object.keys(record(o.data)), ...Object.keys(record(o.stringData))]).size,
    age(o, now),
  ]);

export const serviceAccountPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Secrets', 'string', 'core/v1.ServiceAccount', 'secrets'), ageColumn()], (o, now) => [
    nameOf(o),
    list(o.secrets).length,
    age(o, now),
  ]);

export const leasePrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Holder', 'string', 'coordination/v1.LeaseSpec', 'holderIdentity'), ageColumn()], (o, now) => [
    nameOf(o),
    str(o.spec?.holderIdentity),
    age(o, now),
  ]);

export const servicePrinter = (): TableConvertor =>
  printer(
    [
      nameColumn(),
      docColumn('Type', 'string', 'core/v1.ServiceSpec', 'type'),
      docColumn('Cluster-IP', 'string', 'core/v1.ServiceSpec', 'clusterIP'),
      docColumn('External-IP', 'string', 'core/v1.ServiceSpec', 'externalIPs'),
      docColumn('Port(s)', 'string', 'core/v1.ServiceSpec', 'ports'),
      ageColumn(),
      docColumn('Selector', 'string', 'core/v1.ServiceSpec', 'selector', 1),
    ],
    (o, now) => {
      const spec = record(o.spec);
      // Unset fields read as upstream's defaults would have set them (type ClusterIP, clusterIPs from clusterIP).
      const type = str(spec.type) || 'ClusterIP';
      const clusterIPs = list(spec.clusterIPs) as unknown[];
      const internalIP = str(clusterIPs[0]) || str(spec.clusterIP) || '<none>';
      const ports = list(spec.ports)
        .map((p) => {
          const protocol = str(p.protocol) || 'TCP';
          return int(p.nodePort) > 0 ? `${int(p.port)}:${int(p.nodePort)}/${protocol}` : `${int(p.port)}/${protocol}`;
        })
        .join(',');
      return [nameOf(o), type, internalIP, externalIP(type, spec, record(o.status)), ports || '<none>', age(o, now), formatLabels(spec.selector)];
    },
  );

function externalIP(type: string, spec: Record<string, unknown>, status: Record<string, unknown>): string {
  const externalIPs = (list(spec.externalIPs) as unknown[]).map(str);
  switch (type) {
    case 'ClusterIP':
    case 'NodePort':
      return externalIPs.length ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      // Server-side tables are wide: the list is not clipped to 16 characters.
      const lb = [...new Set(list(record(status.loadBalancer).ingress).map((i) => str(i.ip) || str(i.hostname)).filter(Boolean))].sort();
      if (externalIPs.length) return [...lb, ...externalIPs].join(',');
      return lb.length ? lb.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(spec.externalName);
  }
  return '<unknown>';
}

export const endpointsPrinter = (): TableConvertor =>
  printer([nameColumn(), docColumn('Endpoints', 'string', 'core/v1.Endpoints', 'subsets'), ageColumn()], (o, now) => [nameOf(o), formatEndpoints(o), age(o, now)]);

function formatEndpoints(o: KObject): string {
  const subsets = list(o.subsets);
  if (subsets.length === 0) return '<none>';
  const out: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses = list(ss.addresses);
    const ports = list(ss.ports);
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) {
        if (out.length === max) {
          more = true;
          break;
        }
        out.push(str(a.ip));
      }
      continue;
    }
    for (const port of ports) {
      count += addresses.length;
      for (const a of addresses) {
        if (out.length === max) {
          more = true;
          break;
        }
        const ip = str(a.ip);
        out.push(`${ip.includes(':') ? `[${ip}]` : ip}:${int(port.port)}`);
      }
    }
  }
  const s = out.join(',');
  return more ? `${s} + ${count - max} more...` : s;
}

export const eventPrinter = (): TableConvertor =>
  printer(
    [
      docColumn('Last Seen', 'string', 'core/v1.Event', 'lastTimestamp'),
      docColumn('Type', 'string', 'core/v1.Event', 'type'),
      docColumn('Reason', 'string', 'core/v1.Event', 'reason'),
      docColumn('Object', 'string', 'core/v1.Event', 'involvedObject'),
      docColumn('Subobject', 'string', 'core/v1.ObjectReference', 'fieldPath', 1),
      docColumn('Source', 'string', 'core/v1.Event', 'source', 1),
      docColumn('Message', 'string', 'core/v1.Event', 'message'),
      docColumn('First Seen', 'string', 'core/v1.Event', 'firstTimestamp', 1),
      docColumn('Count', 'string', 'core/v1.Event', 'count', 1),
      column('Name', 'string', fieldDoc('meta/v1.ObjectMeta', 'name'), 1, 'name'),
    ],
    (o, now) => eventCells(o.apiVersion === 'events.k8s.io/v1' || o.apiVersion === 'events.k8s.io/v1beta1' ? fromEventsV1(o) : o, now),
  );

/** An events.k8s.io/v1 Event in core/v1 field names (what converting it to the internal Event does). */
function fromEventsV1(o: KObject): KObject {
  return {
    metadata: o.metadata,
    involvedObject: o.regarding,
    message: o.note,
    source: o.deprecatedSource,
    firstTimestamp: o.deprecatedFirstTimestamp,
    lastTimestamp: o.deprecatedLastTimestamp,
    count: o.deprecatedCount,
    eventTime: o.eventTime,
    series: o.series,
    type: o.type,
    reason: o.reason,
    reportingComponent: o.reportingController,
    reportingInstance: o.reportingInstance,
  };
}

function eventCells(o: KObject, now: number): unknown[] {
  let first = translateTimestampSince(o.firstTimestamp, now);
  if (timestampMillis(o.firstTimestamp) === undefined) first = translateTimestampSince(o.eventTime, now);
  let last = translateTimestampSince(o.lastTimestamp, now);
  if (timestampMillis(o.lastTimestamp) === undefined) last = first;
  let count = int(o.count);
  if (o.series && typeof o.series === 'object') {
    last = translateTimestampSince(o.series.lastObservedTime, now);
    count = int(o.series.count);
  } else if (count === 0 || count === 0n) {
    count = 1;
  }
  const involved = record(o.involvedObject);
  const kind = str(involved.kind).toLowerCase();
  const target = str(involved.name) ? `${kind}/${str(involved.name)}` : kind;
  const src = record(o.source);
  const component = str(src.component) || str(o.reportingComponent);
  const instance = str(src.host) || str(o.reportingInstance);
  const source = instance ? `${component}, ${instance}` : component;
  return [last, str(o.type), str(o.reason), target, str(involved.fieldPath), source, str(o.message).trim(), first, count, nameOf(o)];
}
