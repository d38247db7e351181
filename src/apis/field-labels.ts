/**
 * The field labels each built-in kind's field selectors may use: upstream's field label conversion functions
 * (pkg/apis/<group>/<version>/conversion.go), as data. A kind not listed has apimachinery's default,
 * DefaultMetaV1FieldSelectorConversion: metadata.name and metadata.namespace only. A label upstream does not know
 * is the client's mistake: 400 with the conversion function's message.
 */

import { goQuote } from '../machinery/go-text.js';

/** A kind's labels: each label's path in the object (its own, unless renamed), and the message for any other. */
interface KindLabels {
  labels: Readonly<Record<string, string>>;
  error: (label: string) => string;
}

const NOT_SUPPORTED = (label: string): string => `field label not supported: ${label}`;

/** A label set whose labels read their own paths. */
function same(...labels: string[]): Record<string, string> {
  return Object.fromEntries(labels.map((l) => [l, l]));
}

const EVENT_LABELS = same(
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'type',
  'metadata.namespace',
  'metadata.name',
);

/** Keyed by `group/version/Kind` (the core group's as `/v1/Kind`). */
const KINDS: Readonly<Record<string, KindLabels>> = {
  '/v1/Pod': {
    labels: {
      ...same(
        'metadata.name',
        'metadata.namespace',
        'spec.nodeName',
        'spec.restartPolicy',
        'spec.schedulerName',
        'spec.serviceAccountName',
        'spec.hostNetwork',
        'status.phase',
        'status.podIP',
        'status.nominatedNodeName',
      ),
      // Accepted, but not in the pod's field set: it reads as the empty string.
      'status.podIPs': '',
      // Old v1 clients' name for spec.nodeName.
      'spec.host': 'spec.nodeName',
    },
    error: NOT_SUPPORTED,
  },
  '/v1/Node': { labels: same('metadata.name', 'spec.unschedulable'), error: NOT_SUPPORTED },
  '/v1/ReplicationController': { labels: same('metadata.name', 'metadata.namespace', 'status.replicas'), error: NOT_SUPPORTED },
  // An event's `source` field is its source's component.
  '/v1/Event': { labels: { ...EVENT_LABELS, source: 'source.component' }, error: NOT_SUPPORTED },
  '/v1/Namespace': { labels: same('status.phase', 'metadata.name'), error: NOT_SUPPORTED },
  '/v1/Secret': { labels: same('type', 'metadata.namespace', 'metadata.name'), error: NOT_SUPPORTED },
  '/v1/Service': { labels: same('metadata.namespace', 'metadata.name', 'spec.clusterIP', 'spec.type'), error: NOT_SUPPORTED },
  // Selected on the events.k8s.io form of the event (regarding, reportingController).
  'events.k8s.io/v1/Event': {
    labels: same(
      'reason',
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'regarding.apiVersion',
      'regarding.resourceVersion',
      'regarding.fieldPath',
      'reportingController',
      'type',
      'metadata.namespace',
      'metadata.name',
    ),
    error: NOT_SUPPORTED,
  },
  'batch/v1/Job': { labels: same('metadata.name', 'metadata.namespace', 'status.successful'), error: (l) => `field label ${goQuote(l)} not supported for batchv1.Job` },
  'batch/v1beta1/CronJob': { labels: same('metadata.name', 'metadata.namespace', 'status.successful'), error: (l) => `field label ${goQuote(l)} not supported for "CronJob"` },
  'certificates.k8s.io/v1/CertificateSigningRequest': { labels: same('metadata.name', 'spec.signerName'), error: NOT_SUPPORTED },
};

const DEFAULT_LABELS: KindLabels = {
  labels: same('metadata.name', 'metadata.namespace'),
  error: (l) => `${goQuote(l)} is not a known field selector: only "metadata.name", "metadata.namespace"`,
};

/** What a field label reads in an object of a built-in kind: its path (`''`: always the empty string), or the 400's message. */
export type FieldLabelResolution = { path: string } | { error: string };

/** The field label conversion of a built-in kind. */
export function builtinFieldLabel(group: string, version: string, kind: string): (label: string) => FieldLabelResolution {
  const k = KINDS[`${group}/${version}/${kind}`] ?? DEFAULT_LABELS;
  return (label) => (Object.hasOwn(k.labels, label) ? { path: k.labels[label]! } : { error: k.error(label) });
}
