/** The rbac.authorization.k8s.io group's resources: its rows of the built-in table (see resource-table.ts). */
import { bindingPrinter } from '../../printing/index.js';
import { res, plain, type BuiltinResource } from '../resource-table.js';
import { rbacStrategy } from './validation.js';

/** The resources of rbac.authorization.k8s.io kapi serves. */
export const RBAC_RESOURCES: BuiltinResource[] = [
  res('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true, { strategy: rbacStrategy(plain, 'Role') }),
  res('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true, { printer: bindingPrinter, strategy: rbacStrategy(plain, 'RoleBinding') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false, { strategy: rbacStrategy(plain, 'ClusterRole') }),
  res('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false, { printer: bindingPrinter, strategy: rbacStrategy(plain, 'ClusterRoleBinding') }),
];
