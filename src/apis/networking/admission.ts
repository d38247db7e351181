/** DefaultIngressClass: a new Ingress that names no class (field or legacy annotation) gets the default IngressClass. */
import type { AdmissionPluginDefinition } from '../admission-plugins.js';
import { defaultClass } from '../default-class.js';
import { objectForScan } from '../../cache/watch-cache.js';

export const NETWORKING_ADMISSION: AdmissionPluginDefinition[] = [
  {
    name: 'DefaultIngressClass',
    // Nothing to default from while IngressClasses are not served (--runtime-config).
    caches: (ctx) => [ctx.registry.lookup('networking.k8s.io', 'v1', 'ingressclasses')?.store].filter((x) => x !== undefined),
    make: (ctx) => {
      const store = ctx.registry.lookup('networking.k8s.io', 'v1', 'ingressclasses')?.store;
      return {
        name: 'DefaultIngressClass',
        reportsChanges: true,
        admit(a) {
          const ing = a.object;
          if (!ing || a.operation !== 'CREATE' || a.subresource || a.resource.group !== 'networking.k8s.io' || a.resource.resource !== 'ingresses') return;
          if (!store || ing.spec?.ingressClassName || ing.metadata?.annotations?.['kubernetes.io/ingress.class'] !== undefined) return;
          const def = defaultClass(store.cache.list().items.map(objectForScan), ['ingressclass.kubernetes.io/is-default-class']);
          if (!def) return;
          ing.spec = { ...(ing.spec ?? {}), ingressClassName: def.metadata.name };
          a.defaulter?.(ing);
        },
      };
    },
  },
];
