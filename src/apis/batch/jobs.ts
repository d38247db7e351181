/**
 * Jobs as upstream's registry writes them (no job controller acts on them): unless the selector is
 * manual, the pod template is labelled with the job's name and uid and the selector picks that uid
 * (generateSelector, which runs when the uid is known); metadata.labels, defaulted from the template's,
 * get the same labels.
 */
import type { Strategy } from '../../registry/types.js';
import { deepEqual } from '../../util/deep-equal.js';
import { childRecord as child } from '../../util/json-object.js';
import { validatePodSpecContainers } from '../core/pod-spec-validation.js';



const NAME_LABELS = ['job-name', 'batch.kubernetes.io/job-name'];
const UID_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const triedNames = new WeakMap<object, string>();

export function jobStrategy(base: Strategy): Strategy {
  return {
    ...base,
    validate(job, ctx) {
      const spec = child(job, 'spec');
      if (spec.manualSelector !== true) {
        const meta = job.metadata;
        const templateMeta = child(child(spec, 'template'), 'metadata');
        const labels = child(templateMeta, 'labels');
        const before = { ...labels };
        // A generated name tried again (a collision) relabels what this strategy labelled.
        const tried = triedNames.get(job);
        for (const l of NAME_LABELS) if (!Object.hasOwn(labels, l) || (tried !== undefined && labels[l] === tried)) labels[l] = meta.name;
        triedNames.set(job, meta.name);
        for (const l of UID_LABELS) if (!Object.hasOwn(labels, l)) labels[l] = meta.uid;
        const matchLabels = child(child(spec, 'selector'), 'matchLabels');
        if (!Object.hasOwn(matchLabels, UID_LABELS[1])) matchLabels[UID_LABELS[1]] = meta.uid;
        // SetDefaults_Job shares the template's label map with metadata.labels.
        if (deepEqual(meta.labels, before)) meta.labels = { ...labels };
      }
      return [...validatePodSpecContainers(child(child(spec, 'template'), 'spec'), 'spec.template.spec'), ...(base.validate?.(job, ctx) ?? [])];
    },
  };
}
