/**
 * HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 too, converted as upstream's
 * pkg/apis/autoscaling/v1 conversion does: v1's targetCPUUtilizationPercentage is the v2 metric
 * `Resource cpu Utilization`; what v1 cannot say (other metrics, behavior, current metrics,
 * conditions) travels in the `autoscaling.alpha.kubernetes.io/*` annotations, so a round trip
 * through v1 loses nothing.
 */
import type { KObject } from '../../registry/types.js';
import { isRecord as isObject, type JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObject) : []);

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const ANNOTATIONS = [METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS];

const isCpuUtilization = (m: Obj) =>
  m.type === 'Resource' && isObject(m.resource) && m.resource.name === 'cpu' && isObject(m.resource.target) && m.resource.target.type === 'Utilization';
const isCpuCurrent = (m: Obj) => m.type === 'Resource' && isObject(m.resource) && m.resource.name === 'cpu' && isObject(m.resource.current);

function parseAnnotation(annotations: Obj, key: string): unknown {
  const text = annotations[key];
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An autoscaling/v2 HorizontalPodAutoscaler as v1 serves it. */
export function hpaToV1(v2: KObject): KObject {
  if (v2.apiVersion === 'autoscaling/v1') return v2;
  const spec = isObject(v2.spec) ? v2.spec : {};
  const status = isObject(v2.status) ? v2.status : undefined;
  const annotations: Obj = { ...(isObject(v2.metadata?.annotations) ? v2.metadata.annotations : {}) };
  const out: KObject = { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v1', metadata: { ...v2.metadata } };
  const v1spec: Obj = {};
  for (const k of ['scaleTargetRef', 'minReplicas', 'maxReplicas']) if (spec[k] !== undefined) v1spec[k] = spec[k];
  const metrics = objects(spec.metrics);
  const cpu = metrics.find(isCpuUtilization);
  if (cpu) v1spec.targetCPUUtilizationPercentage = ((cpu.resource as Obj).target as Obj).averageUtilization;
  const others = metrics.filter((m) => m !== cpu);
  if (others.length > 0) annotations[METRICS] = JSON.stringify(others);
  if (spec.behavior !== undefined && spec.behavior !== null) annotations[BEHAVIOR] = JSON.stringify(spec.behavior);
  out.spec = v1spec;
  if (status) {
    const v1status: Obj = {};
    for (const k of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']) if (status[k] !== undefined) v1status[k] = status[k];
    const current = objects(status.currentMetrics);
    const cpuNow = current.find(isCpuCurrent);
    if (cpuNow && ((cpuNow.resource as Obj).current as Obj).averageUtilization !== undefined) {
      v1status.currentCPUUtilizationPercentage = ((cpuNow.resource as Obj).current as Obj).averageUtilization;
    }
    const otherCurrent = current.filter((m) => m !== cpuNow);
    if (otherCurrent.length > 0) annotations[CURRENT_METRICS] = JSON.stringify(otherCurrent);
    if (objects(status.conditions).length > 0) annotations[CONDITIONS] = JSON.stringify(status.conditions);
    out.status = v1status;
  }
  if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}

/** An autoscaling/v1 HorizontalPodAutoscaler in its storage form (v2). */
export function hpaToV2(v1: KObject): KObject {
  if (v1.apiVersion === 'autoscaling/v2') return v1;
  const spec = isObject(v1.spec) ? v1.spec : {};
  const status = isObject(v1.status) ? v1.status : undefined;
  const annotations: Obj = { ...(isObject(v1.metadata?.annotations) ? v1.metadata.annotations : {}) };
  const out: KObject = { kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', metadata: { ...v1.metadata } };
  const v2spec: Obj = {};
  for (const k of ['scaleTargetRef', 'minReplicas', 'maxReplicas']) if (spec[k] !== undefined) v2spec[k] = spec[k];
  const metrics: unknown[] = [];
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  const others = parseAnnotation(annotations, METRICS);
  if (Array.isArray(others)) metrics.push(...others);
  if (metrics.length > 0) v2spec.metrics = metrics;
  const behavior = parseAnnotation(annotations, BEHAVIOR);
  if (isObject(behavior)) v2spec.behavior = behavior;
  out.spec = v2spec;
  if (status) {
    const v2status: Obj = {};
    for (const k of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']) if (status[k] !== undefined) v2status[k] = status[k];
    const current: unknown[] = [];
    if (typeof status.currentCPUUtilizationPercentage === 'number') {
      current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } });
    }
    const otherCurrent = parseAnnotation(annotations, CURRENT_METRICS);
    if (Array.isArray(otherCurrent)) current.push(...otherCurrent);
    if (current.length > 0) v2status.currentMetrics = current;
    const conditions = parseAnnotation(annotations, CONDITIONS);
    if (Array.isArray(conditions)) v2status.conditions = conditions;
    out.status = v2status;
  }
  for (const a of ANNOTATIONS) delete annotations[a];
  if (Object.keys(annotations).length > 0) out.metadata.annotations = annotations;
  else delete out.metadata.annotations;
  return out;
}
