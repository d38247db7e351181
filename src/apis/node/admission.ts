/**
 * The RuntimeClass admission plugin: a new pod that names a RuntimeClass must name one that exists; it gets the
 * class's pod overhead (and may not say another) and its scheduling (node selector, a conflicting value refused;
 * tolerations merged). A pod that names none may not say an overhead.
 */
import type { KObject } from '../../api/object.js';
import type { AdmissionAttributes } from '../../registry/admission.js';
import { deepEqual } from '../../util/deep-equal.js';
import { isRecord, records } from '../../util/json-object.js';
import { admissionForbidden, type AdmissionPluginDefinition } from '../admission-plugins.js';
import { amountsOf, sameAmounts } from '../core/quota-amounts.js';

const isPodCreate = (a: AdmissionAttributes) => a.operation === 'CREATE' && !a.subresource && a.resource.group === '' && a.resource.resource === 'pods' && a.object !== undefined;
const sameOverhead = (a: unknown, b: unknown) => isRecord(a) && isRecord(b) && sameAmounts(amountsOf(a), amountsOf(b));

export const NODE_ADMISSION: AdmissionPluginDefinition[] = [
  {
    name: 'RuntimeClass',
    caches: (ctx) => [ctx.registry.lookup('node.k8s.io', 'v1', 'runtimeclasses')?.store].filter((x) => x !== undefined),
    make: (ctx) => {
      const store = ctx.registry.lookup('node.k8s.io', 'v1', 'runtimeclasses')?.store;
      /** The pod's RuntimeClass (undefined: it names none), read live when the cache does not have it yet. */
      const classOf = async (a: AdmissionAttributes): Promise<KObject | undefined> => {
        const name = a.object!.spec?.runtimeClassName;
        if (typeof name !== 'string' || !store) return undefined;
        const cached = store.cache.get(store.key(undefined, name))?.object;
        if (cached) return cached;
        try {
          return await store.get(undefined, name);
        } catch {
          throw admissionForbidden(a, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
        }
      };
      return {
        name: 'RuntimeClass',
        reportsChanges: true,
        async admit(a) {
          if (!isPodCreate(a)) return;
          const rc = await classOf(a);
          if (!rc) return;
          const pod = a.object!;
          const spec: KObject = (pod.spec ??= {});
          let changed = false;
          if (isRecord(rc.overhead?.podFixed)) {
            if (spec.overhead !== undefined && spec.overhead !== null && !sameOverhead(spec.overhead, rc.overhead.podFixed)) {
              throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
            }
            spec.overhead = { ...rc.overhead.podFixed };
            changed = true;
          }
          const scheduling = isRecord(rc.scheduling) ? rc.scheduling : undefined;
          if (scheduling) {
            const wanted = isRecord(scheduling.nodeSelector) ? scheduling.nodeSelector : {};
            const own: Record<string, unknown> = isRecord(spec.nodeSelector) ? { ...spec.nodeSelector } : {};
            for (const [key, value] of Object.entries(wanted)) {
              if (Object.hasOwn(own, key) && own[key] !== value) {
                throw admissionForbidden(a, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(own[key])}`);
              }
              own[key] = value;
            }
            if (Object.keys(wanted).length > 0) spec.nodeSelector = own;
            const tolerations = records(spec.tolerations);
            const added = records(scheduling.tolerations).filter((t) => !tolerations.some((o) => deepEqual(o, t)));
            if (added.length > 0) spec.tolerations = [...tolerations, ...added];
            changed = true;
          }
          if (changed) a.defaulter?.(pod);
        },
        async validate(a) {
          if (!isPodCreate(a)) return;
          const rc = await classOf(a);
          const overhead = a.object!.spec?.overhead;
          if (rc && isRecord(rc.overhead?.podFixed)) {
            if (!sameOverhead(overhead, rc.overhead.podFixed)) throw admissionForbidden(a, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
          } else if (overhead !== undefined && overhead !== null) {
            throw admissionForbidden(a, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
          }
        },
      };
    },
  },
];
