/**
 * Test helpers for src/apply: a custom resource type and a tiny object "store"
 * that writes the way the handlers will (updateManagedFields on writes,
 * applyObject for applies), with a controllable clock.
 */
import { applyObject, updateManagedFields, type FieldManagerOptions } from '../../src/apply/field-manager.js';
import { typeFromSchema } from '../../src/apply/schema-types.js';
import type { TypeInfo } from '../../src/apply/types.js';
import { StatusError } from '../../src/machinery/status.js';

export const GV = 'example.com/v1';
export const KIND = 'Widget';

export const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        image: { type: 'string' },
        hostname: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        args: { type: 'array', items: { type: 'string' } },
        containers: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              image: { type: 'string' },
              workingDir: { type: 'string' },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
                items: {
                  type: 'object',
                  properties: { containerPort: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' }, name: { type: 'string' } },
                },
              },
            },
          },
        },
        selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
        config: { type: 'object', additionalProperties: { type: 'string' } },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' } } },
  },
};

export const TYPE: TypeInfo = typeFromSchema(SCHEMA);

export type Obj = Record<string, any>;

let seconds = 0;
export function tick(n = 1): Date {
  seconds += n;
  return new Date(Date.UTC(2024, 0, 1, 0, 0, 0) + seconds * 1000);
}

export function widget(spec: Obj | undefined, metadata: Obj = {}, rest: Obj = {}): Obj {
  const o: Obj = { apiVersion: GV, kind: KIND, metadata: { name: 'w', namespace: 'default', ...metadata } };
  if (spec !== undefined) o.spec = spec;
  return { ...o, ...rest };
}

function opts(extra: Partial<FieldManagerOptions> = {}): FieldManagerOptions {
  return { type: TYPE, apiVersion: GV, now: tick(), ...extra };
}

/** What the store adds on create. */
function persist(obj: Obj): Obj {
  obj.metadata.uid ??= '11111111-2222-3333-4444-555555555555';
  obj.metadata.creationTimestamp ??= '2024-01-01T00:00:00Z';
  return obj;
}

export function create(obj: Obj, manager: string, extra: Partial<FieldManagerOptions> = {}): Obj {
  return persist(updateManagedFields(undefined, structuredClone(obj), manager, opts(extra)));
}

export function update(live: Obj, mutate: (o: Obj) => void, manager: string, extra: Partial<FieldManagerOptions> = {}): Obj {
  const next = structuredClone(live);
  mutate(next);
  return updateManagedFields(live, next, manager, opts(extra));
}

export function apply(live: Obj | undefined, config: Obj, manager: string, extra: Partial<FieldManagerOptions> & { force?: boolean; kind?: string } = {}): Obj {
  const out = applyObject(live, structuredClone(config), manager, { ...opts(extra), kind: extra.kind ?? KIND, force: extra.force });
  return live ? out : persist(out);
}

/** The StatusError an apply throws. */
export function applyError(live: Obj | undefined, config: Obj, manager: string, extra: Partial<FieldManagerOptions> & { force?: boolean } = {}): StatusError {
  try {
    apply(live, config, manager, extra);
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('apply succeeded');
}

/** managedFields as `manager/operation[/subresource]: fieldsV1 JSON`, in order. */
export function owners(obj: Obj): string[] {
  return (obj.metadata.managedFields ?? []).map(
    (e: Obj) => `${e.manager}/${e.operation}${e.subresource ? '/' + e.subresource : ''}: ${JSON.stringify(e.fieldsV1)}`,
  );
}
