/**
 * HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 too, converted as upstream's
 * pkg/apis/autoscaling/v1 conversion does: v1's targetCPUUtilizationPercentage is the v2 metric
 * `Resource cpu Utilization`; what v1 cannot say (other metrics, behavior, current metrics,
 * conditions) travels in the `autoscaling.alpha.kubernetes.io/*` annotations, so a round trip
 * through v1 loses nothing.
 */
import type { KObject } from '../../api/object.js';
import { isRecord as isObject, records as objects, type JsonRecord } from '../../util/json-object.js';

type Obj = JsonRecord;

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

/** A v2 MetricTarget as v1 names its parts (`target<Value>` in specs). */
function v1Target(target: unknown, prefix: 'target' | 'current'): Obj {
  const t = isObject(target) ? target : {};
  const out: Obj = {};
  if (t.averageUtilization !== undefined) out[`${prefix}AverageUtilization`] = t.averageUtilization;
  if (t.averageValue !== undefined) out[`${prefix}AverageValue`] = t.averageValue;
  if (t.value !== undefined) out[`${prefix}Value`] = t.value;
  return out;
}

/** A v1 metric's `target<Value>`/`current<Value>` parts as a v2 MetricTarget or MetricValueStatus. */
function v2Target(m: Obj, prefix: 'target' | 'current'): Obj {
  const out: Obj = {};
  if (m[`${prefix}AverageUtilization`] !== undefined) out.averageUtilization = m[`${prefix}AverageUtilization`];
  if (m[`${prefix}AverageValue`] !== undefined) out.averageValue = m[`${prefix}AverageValue`];
  if (m[`${prefix}Value`] !== undefined) out.value = m[`${prefix}Value`];
  if (prefix === 'target') out.type = out.averageUtilization !== undefined ? 'Utilization' : out.averageValue !== undefined ? 'AverageValue' : 'Value';
  return out;
}

/** A v2 MetricSpec (spec) or MetricStatus (status) in v1's form, as the annotations hold them. */
function metricToV1(m: Obj, prefix: 'target' | 'current'): Obj {
  const part = prefix === 'target' ? 'target' : 'current';
  const out: Obj = { type: m.type };
  const metric = (x: Obj) => (isObject(x.metric) ? x.metric : {});
  if (isObject(m.resource)) out.resource = { name: m.resource.name, ...v1Target(m.resource[part], prefix) };
  if (isObject(m.containerResource)) out.containerResource = { name: m.containerResource.name, container: m.containerResource.container, ...v1Target(m.containerResource[part], prefix) };
  if (isObject(m.pods)) out.pods = { metricName: metric(m.pods).name, selector: metric(m.pods).selector, ...v1Target(m.pods[part], prefix) };
  if (isObject(m.object)) {
    const t = v1Target(m.object[part], prefix);
    out.object = { target: m.object.describedObject, metricName: metric(m.object).name, selector: metric(m.object).selector, ...t };
    if (t[`${prefix}AverageValue`] !== undefined) (out.object as Obj).averageValue = t[`${prefix}AverageValue`];
    delete (out.object as Obj)[`${prefix}AverageValue`];
  }
  if (isObject(m.external)) out.external = { metricName: metric(m.external).name, metricSelector: metric(m.external).selector, ...v1Target(m.external[part], prefix) };
  // Pods metrics have only an average in v1.
  if (isObject(out.pods) && prefix === 'target') delete (out.pods as Obj).targetValue;
  return dropUndefined(out);
}

/** A v1 MetricSpec or MetricStatus (from the annotations) in v2's form. */
function metricToV2(m: Obj, prefix: 'target' | 'current'): Obj {
  const part = prefix === 'target' ? 'target' : 'current';
  const out: Obj = { type: m.type };
  if (isObject(m.resource)) out.resource = { name: m.resource.name, [part]: v2Target(m.resource, prefix) };
  if (isObject(m.containerResource)) out.containerResource = { name: m.containerResource.name, container: m.containerResource.container, [part]: v2Target(m.containerResource, prefix) };
  if (isObject(m.pods)) out.pods = { metric: { name: m.pods.metricName, selector: m.pods.selector }, [part]: v2Target(m.pods, prefix) };
  if (isObject(m.object)) {
    const o = m.object;
    const withAverage = o.averageValue !== undefined ? { ...o, [`${prefix}AverageValue`]: o.averageValue } : o;
    out.object = { describedObject: o.target, metric: { name: o.metricName, selector: o.selector }, [part]: v2Target(withAverage, prefix) };
  }
  if (isObject(m.external)) out.external = { metric: { name: m.external.metricName, selector: m.external.metricSelector }, [part]: v2Target(m.external, prefix) };
  return dropUndefined(out);
}

/** The object without its undefined members, nested objects included (JSON has no undefined). */
function dropUndefined(o: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = isObject(v) ? dropUndefined(v) : v;
  return out;
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
  if (others.length > 0) annotations[METRICS] = JSON.stringify(others.map((m) => metricToV1(m, 'target')));
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
    // All of them, the CPU one too: its raw value is kept as well.
    if (current.length > 0) annotations[CURRENT_METRICS] = JSON.stringify(current.map((m) => metricToV1(m, 'current')));
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
  // The other metrics first, then the CPU one (as upstream's conversion orders them).
  const metrics: unknown[] = [];
  const others = parseAnnotation(annotations, METRICS);
  if (Array.isArray(others)) metrics.push(...others.filter(isObject).map((m) => metricToV2(m, 'target')));
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage } } });
  }
  if (metrics.length > 0) v2spec.metrics = metrics;
  const behavior = parseAnnotation(annotations, BEHAVIOR);
  if (isObject(behavior)) v2spec.behavior = behavior;
  out.spec = v2spec;
  if (status) {
    const v2status: Obj = {};
    for (const k of ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']) if (status[k] !== undefined) v2status[k] = status[k];
    let current: unknown[] = [];
    if (typeof status.currentCPUUtilizationPercentage === 'number') {
      current.push({ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } });
    }
    // The annotation, when there, holds them all.
    const annotated = parseAnnotation(annotations, CURRENT_METRICS);
    if (Array.isArray(annotated)) current = annotated.filter(isObject).map((m) => metricToV2(m, 'current'));
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
