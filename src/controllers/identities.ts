/**
 * Who the in-process controllers are when they call the API: the service
 * accounts kube-controller-manager uses with --use-service-account-credentials,
 * each with a bearer token made at start (never written anywhere) and
 * kube-controller-manager's User-Agent, whose product names their writes in
 * managedFields.
 */
import { randomBytes } from 'node:crypto';
import type { UserInfo } from '../server/authn.js';
import { versionInfo } from '../server/health.js';

export interface ControllerIdentity {
  user: UserInfo;
  token: string;
  userAgent: string;
}

function serviceAccount(name: string): ControllerIdentity {
  const username = `system:serviceaccount:kube-system:${name}`;
  return {
    user: { name: username, uid: '', groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system'] },
    token: randomBytes(32).toString('base64url'),
    userAgent: `kube-controller-manager/${versionInfo().gitVersion} (${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}) kubernetes/kapi/${username}`,
  };
}

export function controllerIdentities(): { namespaces: ControllerIdentity; garbageCollector: ControllerIdentity } {
  return { namespaces: serviceAccount('namespace-controller'), garbageCollector: serviceAccount('generic-garbage-collector') };
}
