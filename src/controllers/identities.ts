/**
 * Who the in-process controllers are when they call the API: the service
 * accounts kube-controller-manager uses with --use-service-account-credentials
 * (and kube-controller-manager and the apiserver's loopback client themselves),
 * each with a bearer token made at start (never written anywhere) and
 * kube-controller-manager's User-Agent, whose product names their writes in
 * managedFields.
 */
import { randomBytes } from 'node:crypto';
import type { UserInfo } from '../api/authentication.js';
import { versionInfo } from '../server/health.js';

export interface ControllerIdentity {
  user: UserInfo;
  token: string;
  userAgent: string;
}

function identity(username: string, groups: string[], product = 'kube-controller-manager'): ControllerIdentity {
  return {
    user: { name: username, uid: '', groups },
    token: randomBytes(32).toString('base64url'),
    userAgent: `${product}/${versionInfo().gitVersion} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) kubernetes/kapi/${username}`,
  };
}

function serviceAccount(name: string): ControllerIdentity {
  return identity(`system:serviceaccount:kube-system:${name}`, ['system:serviceaccounts', 'system:serviceaccounts:kube-system']);
}

export interface ControllerIdentities {
  /** The apiserver's own loopback client (the CRD finalizer), as kube-apiserver's: system:masters. */
  apiserver: ControllerIdentity;
  /** Leader election, as kube-controller-manager itself. */
  controllerManager: ControllerIdentity;
  namespaces: ControllerIdentity;
  garbageCollector: ControllerIdentity;
  /** The `default` ServiceAccount of every namespace. */
  serviceAccounts: ControllerIdentity;
  /** The `kube-root-ca.crt` ConfigMap of every namespace. */
  rootCaPublisher: ControllerIdentity;
  /** The rules of ClusterRoles with an aggregationRule. */
  clusterRoleAggregation: ControllerIdentity;
  /** ValidatingAdmissionPolicies' status (type checking). */
  admissionPolicyStatus: ControllerIdentity;
  /** ResourceQuotas' status (hard and used). */
  resourceQuota: ControllerIdentity;
}

export function controllerIdentities(): ControllerIdentities {
  return {
    apiserver: identity('system:apiserver', ['system:masters'], 'kube-apiserver'),
    controllerManager: identity('system:kube-controller-manager', []),
    namespaces: serviceAccount('namespace-controller'),
    garbageCollector: serviceAccount('generic-garbage-collector'),
    serviceAccounts: serviceAccount('service-account-controller'),
    rootCaPublisher: serviceAccount('root-ca-cert-publisher'),
    clusterRoleAggregation: serviceAccount('clusterrole-aggregation-controller'),
    admissionPolicyStatus: serviceAccount('validatingadmissionpolicy-status-controller'),
    resourceQuota: serviceAccount('resourcequota-controller'),
  };
}
