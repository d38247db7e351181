/**
 * The kapi SDK (package `kapi/sdk`): resources defined in TypeScript (schemas written once, storage strategy
 * hooks, versions converted through an internal form), a typed client of kapi or of any API server through a
 * kubeconfig, and a controller runtime (shared informers, rate-limited work queues, level-based reconcilers,
 * finalizers, owner references, conditions, events, leader election, metrics).
 */
export { t, type Infer, type InferInput, type Schema, type ObjectOf, type ObjectInputOf, type WithOptions } from './schema.js';
export {
  defineResource,
  version,
  fieldError,
  pluralOf,
  type FieldError,
  type KubeObject,
  type ObjectMeta,
  type OwnerReference,
  type PrinterColumn,
  type ResourceDefinition,
  type ResourceDefinitionInput,
  type ResourceObject,
  type ResourceStrategy,
  type ResourceVersion,
  type TypeOf,
  type InputOf,
} from './resource.js';
export { Client, ResourceClient, resourcePath, type GroupVersionResource, type DeleteOptionsBody, type WatchHandlers } from './client.js';
export { connect, type ConnectOptions } from './kubeconfig.js';
export { Informer, objectKey, type InformerHandlers, type InformerOptions, type IndexFunc } from './informer.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';
export { CachedResourceClient } from './cached-client.js';
export { Controller, Manager, predicates, type ControllerOptions, type ControllerPolicyRule, type ManagerOptions, type Predicate, type Reconciler, type ReconcileRequest, type ReconcileResult, type ResourceRef, type Runnable } from './controller.js';
export {
  addFinalizer,
  findStatusCondition,
  handleFinalizer,
  hasFinalizer,
  isBeingDeleted,
  isControlledBy,
  isStatusConditionTrue,
  ownerReference,
  removeFinalizer,
  removeStatusCondition,
  setControllerReference,
  setStatusCondition,
  type Condition,
} from './helpers.js';
export { EventRecorder, type EventRecorderOptions } from './events.js';
export { ping, type HealthChecker } from './probes.js';
export { selfSignedCertificate, type SelfSignedWebhooks, type WebhookServerOptions } from './webhooks.js';
export { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
export { StatusError } from '../machinery/status.js';
/**
 * The built-in API types as their JSON reads, by package (`corev1.ConfigMap`, `appsv1.Deployment`, `metav1.ObjectMeta`),
 * generated from kapi's Go type model: `client.resource<corev1.ConfigMap>({ group: '', version: 'v1', resource: 'configmaps' })`.
 */
export type * from '../api/kinds/index.js';
