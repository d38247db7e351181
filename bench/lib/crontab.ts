/** The CronTab-like CRD of the API benchmarks: a validated schema (pattern, bounds) with a status subresource, and its ~1 KB objects. */
export const GROUP = 'bench.example.com';

export function crontabCrd(plural = 'crontabs', kind = 'CronTab'): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
                    image: { type: 'string' },
                    replicas: { type: 'integer', minimum: 1, maximum: 10 },
                    notes: { type: 'string' },
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } },
              },
            },
          },
        },
      ],
    },
  };
}

const PAD = 'x'.repeat(700);

/** A CronTab of about 1 KB; `name` undefined gives one with generateName. */
export function crontab(name: string | undefined, ns: string, i: number): Record<string, unknown> {
  const naming = name === undefined ? { generateName: 'o-' } : { name };
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'CronTab',
    metadata: { ...naming, namespace: ns, labels: { app: 'bench', shard: String(i % 10) } },
    spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 1 + (i % 10), notes: PAD },
  };
}

export const crontabsPath = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/crontabs`;
