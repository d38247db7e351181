/**
 * The checks of upstream's workload validation that users meet most: a selector is required, is not
 * empty and matches the pod template's labels (ValidatePodTemplateSpecForReplicaSet), the template
 * restarts Always and has containers, replicas are not negative; on update the selector of apps/v1
 * workloads is immutable and a StatefulSet's spec changes only where upstream allows.
 */
import { field, type FieldError } from '../../machinery/field-errors.js';
import { compareGoStrings } from '../../machinery/go-text.js';
import { selectorFromLabelSelector, validateLabelSelector, type LabelSelectorSpec } from '../../machinery/labels.js';
import type { Strategy } from '../../registry/types.js';
import type { KObject } from '../../api/object.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord, records, type JsonRecord } from '../../util/json-object.js';
import { validatePodSpecContainers } from '../core/pod-spec-validation.js';

/** A map as json.Marshal writes it (keys sorted), for an error's value. */
function sortedMap(m: JsonRecord): JsonRecord {
  return Object.fromEntries(Object.keys(m).sort(compareGoStrings).map((k) => [k, m[k]]));
}

/** ValidatePodTemplateSpecForReplicaSet and the selector checks of the workload's spec validation. */
function validateSelectorAndTemplate(spec: JsonRecord, kind: string): FieldError[] {
  const errs: FieldError[] = [];
  const selector = spec.selector;
  if (selector === undefined || selector === null) errs.push(field.required('spec.selector', ''));
  else if (isRecord(selector)) {
    errs.push(...validateLabelSelector(selector as LabelSelectorSpec, 'spec.selector'));
    const labels = isRecord(selector.matchLabels) ? Object.keys(selector.matchLabels).length : 0;
    const exprs = Array.isArray(selector.matchExpressions) ? selector.matchExpressions.length : 0;
    if (labels + exprs === 0) errs.push(field.invalid('spec.selector', selector, `empty selector is invalid for ${kind}`));
  }
  const template = isRecord(spec.template) ? spec.template : undefined;
  if (!template) {
    errs.push(field.required('spec.template', ''));
    return errs;
  }
  const templateLabels = isRecord(template.metadata) && isRecord(template.metadata.labels) ? template.metadata.labels : {};
  let matches = false;
  try {
    const sel = selectorFromLabelSelector((isRecord(selector) ? selector : null) as LabelSelectorSpec | null);
    matches = sel.empty || sel.matches(templateLabels as Record<string, string>);
  } catch {
    matches = true; // an invalid selector has its own error
  }
  if (!matches) errs.push(field.invalid('spec.template.metadata.labels', sortedMap(templateLabels), '`selector` does not match template `labels`'));
  const podSpec = isRecord(template.spec) ? template.spec : {};
  errs.push(...validatePodSpecContainers(kind === 'statefulset' ? withClaimVolumes(podSpec, spec.volumeClaimTemplates) : podSpec, 'spec.template.spec'));
  const restart = podSpec.restartPolicy ?? 'Always';
  if (restart !== 'Always') errs.push(field.notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (podSpec.activeDeadlineSeconds !== undefined && podSpec.activeDeadlineSeconds !== null) {
    errs.push(field.invalid('spec.template.spec.activeDeadlineSeconds', podSpec.activeDeadlineSeconds, 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return errs;
}

/**
 * A StatefulSet's pod template as its pods will have it (volumesToAddForTemplates): a volume for each volume claim
 * template the template does not name already, so that containers may mount the claims.
 */
function withClaimVolumes(podSpec: JsonRecord, claimTemplates: unknown): JsonRecord {
  const volumes = records(podSpec.volumes);
  const named = new Set(volumes.map((v) => v.name));
  const added = records(claimTemplates)
    .map((c) => (isRecord(c.metadata) ? c.metadata.name : undefined))
    .filter((name): name is string => typeof name === 'string' && !named.has(name))
    .map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
  return added.length === 0 ? podSpec : { ...podSpec, volumes: [...volumes, ...added] };
}

function validateReplicas(spec: JsonRecord): FieldError[] {
  return typeof spec.replicas === 'number' && spec.replicas < 0 ? [field.invalid('spec.replicas', spec.replicas, 'must be greater than or equal to 0')] : [];
}

/** The StatefulSet spec fields an update may change (ValidateStatefulSetUpdate). */
const STATEFULSET_UPDATABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

/**
 * Workload validation over `base`; `kind` names the workload in the empty-selector message as
 * upstream does (ReplicaSets say "deployment", as upstream's message does).
 */
export function workloadValidation(base: Strategy, kind: 'deployment' | 'daemonset' | 'statefulset', opts: { replicas?: boolean } = {}): Strategy {
  const check = (obj: KObject) => {
    const spec = isRecord(obj.spec) ? obj.spec : {};
    return [...(opts.replicas ? validateReplicas(spec) : []), ...validateSelectorAndTemplate(spec, kind)];
  };
  return {
    ...base,
    validate: (obj, ctx) => [...check(obj), ...(base.validate?.(obj, ctx) ?? [])],
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource) return base.validateUpdate?.(obj, old, ctx) ?? [];
      const errs = check(obj);
      const spec = isRecord(obj.spec) ? obj.spec : {};
      const oldSpec = isRecord(old.spec) ? old.spec : {};
      if (kind === 'statefulset') {
        const changed = Object.keys({ ...spec, ...oldSpec }).filter((k) => !STATEFULSET_UPDATABLE.includes(k) && !deepEqual(spec[k], oldSpec[k]));
        if (changed.length > 0) {
          errs.push(
            field.forbidden(
              'spec',
              "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ),
          );
        }
      } else if (!deepEqual(spec.selector, oldSpec.selector)) {
        errs.push(field.invalid('spec.selector', spec.selector ?? null, 'field is immutable'));
      }
      return [...errs, ...(base.validateUpdate?.(obj, old, ctx) ?? [])];
    },
  };
}

/**
 * ControllerRevision (ValidateControllerRevision and its update): `data` is mandatory and never changes, `revision`
 * is not negative. Its name is a DNS subdomain, as the generic check has it.
 */
export function controllerRevisionValidation(base: Strategy): Strategy {
  const validate = (obj: KObject): FieldError[] => {
    const errs: FieldError[] = [];
    if (obj.data === undefined || obj.data === null) errs.push(field.required('data', 'data is mandatory'));
    if (typeof obj.revision === 'number' && obj.revision < 0) errs.push(field.invalid('revision', obj.revision, 'must be greater than or equal to 0'));
    return errs;
  };
  return {
    ...base,
    validate: (obj, ctx) => [...validate(obj), ...(base.validate?.(obj, ctx) ?? [])],
    validateUpdate(obj, old, ctx) {
      const errs = validate(obj);
      if (!deepEqual(obj.data ?? null, old.data ?? null)) errs.push(field.invalid('data', obj.data ?? null, 'field is immutable'));
      return [...errs, ...(base.validateUpdate?.(obj, old, ctx) ?? [])];
    },
  };
}
