/** The rbac.authorization.k8s.io group's resources (its rows of the built-in table, see resource-table.ts), its stores and start hook. */
import { bindingPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';
import { rbacStrategy } from './validation.js';
import type { ApiRegistry } from '../../registry/registry.js';
import type { RestStore } from '../../registry/store.js';
import type { StartHook } from '../start-hooks.js';
import { RBAC_GROUP, type RbacStores } from './authorizer.js';
import { reconcileBootstrapPolicy } from './bootstrap.js';

/** The resources of rbac.authorization.k8s.io kapi serves. */
export const RBAC_RESOURCES: BuiltinResource[] = [
  res('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, { strategy: rbacStrategy(plain, 'Role') }),
  res('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, { printer: bindingPrinter, strategy: rbacStrategy(plain, 'RoleBinding') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, { strategy: rbacStrategy(plain, 'ClusterRole') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, { printer: bindingPrinter, strategy: rbacStrategy(plain, 'ClusterRoleBinding') }),
];

/** The stores of RBAC's four kinds, as the authorizer and the bootstrap policy read them. */
export function rbacStores(store: (group: string, resource: string) => RestStore): RbacStores {
  return { roles: store(RBAC_GROUP, 'roles'), roleBindings: store(RBAC_GROUP, 'rolebindings'), clusterRoles: store(RBAC_GROUP, 'clusterroles'), clusterRoleBindings: store(RBAC_GROUP, 'clusterrolebindings') };
}

/** The stores of RBAC's four kinds in a registry. */
export const registryRbacStores = (registry: ApiRegistry): RbacStores => rbacStores((group, resource) => registry.lookup(group, 'v1', resource)!.store);

/** rbac/bootstrap-roles: the bootstrap policy's roles and bindings, reconciled as upstream's. */
export const RBAC_START_HOOKS: StartHook[] = [{ name: 'rbac/bootstrap-roles', run: (ctx) => reconcileBootstrapPolicy(rbacStores(ctx.store)) }];
