#!/usr/bin/env node
/**
 * RBAC's bootstrap policy, from its readable source (src/apis/rbac/bootstrap-policy.yaml) to the module
 * kapi loads (src/apis/rbac/bootstrap-policy.ts: the same data as one JSON string, parsed at first use).
 * Checks the policy first: names unique per kind and namespace, every object labelled and annotated as
 * upstream's bootstrap objects are, every binding's role part of the policy, every rule with verbs.
 *
 *   node scripts/gen-bootstrap-policy.mjs                    write bootstrap-policy.ts
 *   node scripts/gen-bootstrap-policy.mjs --check            fail when bootstrap-policy.ts is not what the YAML gives
 *   node scripts/gen-bootstrap-policy.mjs --upstream <dir>   also compare with upstream's fixtures of the policy
 *     (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata): names on one side only
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { withHeader } from './generated.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src/apis/rbac/bootstrap-policy.yaml');
const target = join(root, 'src/apis/rbac/bootstrap-policy.ts');
const args = process.argv.slice(2);

const policy = YAML.parse(readFileSync(source, 'utf8'));
const problems = verify(policy);
if (problems.length) {
  for (const p of problems) console.error(`bootstrap-policy.yaml: ${p}`);
  process.exit(1);
}

const upstreamAt = args.indexOf('--upstream');
if (upstreamAt >= 0) compareWithUpstream(args[upstreamAt + 1]);

const text = withHeader(
  'scripts/gen-bootstrap-policy.mjs from bootstrap-policy.yaml',
  `/**
 * RBAC's bootstrap policy: the roles and bindings kube-apiserver reconciles at every start. Where it comes
 * from, and how to change it: bootstrap-policy.yaml, its source.
 */
import type { KObject } from '../../api/object.js';

type Meta = { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };

export interface BootstrapPolicy {
  clusterRoles: Array<Meta & { rules: KObject[]; aggregationRule?: KObject }>;
  clusterRoleBindings: Array<Meta & { roleRef: KObject; subjects: KObject[] }>;
  roles: Array<Meta & { namespace: string; rules: KObject[] }>;
  roleBindings: Array<Meta & { namespace: string; roleRef: KObject; subjects: KObject[] }>;
}

// Parsed on first use: JSON.parse is faster than an object literal of this size.
let parsed: BootstrapPolicy | undefined;
export function bootstrapPolicy(): BootstrapPolicy {
  return (parsed ??= JSON.parse(POLICY) as BootstrapPolicy);
}

const POLICY = ${JSON.stringify(JSON.stringify(policy))};
`,
);

if (args.includes('--check')) {
  if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
    console.error('src/apis/rbac/bootstrap-policy.ts is not what bootstrap-policy.yaml gives: run node scripts/gen-bootstrap-policy.mjs');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
}

function verify(p) {
  const out = [];
  const kinds = ['clusterRoles', 'clusterRoleBindings', 'roles', 'roleBindings'];
  for (const k of kinds) if (!Array.isArray(p?.[k])) out.push(`${k}: a list is required`);
  if (out.length) return out;
  const clusterRoles = new Set(p.clusterRoles.map((r) => r.name));
  const roles = new Set(p.roles.map((r) => `${r.namespace}/${r.name}`));
  for (const k of kinds) {
    const seen = new Set();
    for (const [i, o] of p[k].entries()) {
      const at = `${k}[${i}] ${o?.namespace ? `${o.namespace}/` : ''}${o?.name}`;
      if (typeof o?.name !== 'string' || o.name === '') out.push(`${at}: a name is required`);
      if (k.startsWith('role') && typeof o.namespace !== 'string') out.push(`${at}: a namespace is required`);
      const id = `${o.namespace ?? ''}/${o.name}`;
      if (seen.has(id)) out.push(`${at}: named twice`);
      seen.add(id);
      if (o.labels?.['kubernetes.io/bootstrapping'] !== 'rbac-defaults') out.push(`${at}: the label kubernetes.io/bootstrapping=rbac-defaults is missing`);
      if (!['true', 'false'].includes(o.annotations?.['rbac.authorization.kubernetes.io/autoupdate'])) out.push(`${at}: the annotation rbac.authorization.kubernetes.io/autoupdate is missing`);
      if (k.endsWith('Bindings')) {
        const ref = o.roleRef ?? {};
        if (ref.apiGroup !== 'rbac.authorization.k8s.io') out.push(`${at}: roleRef.apiGroup must be rbac.authorization.k8s.io`);
        const known = ref.kind === 'ClusterRole' ? clusterRoles.has(ref.name) : ref.kind === 'Role' && k === 'roleBindings' && roles.has(`${o.namespace}/${ref.name}`);
        if (!known) out.push(`${at}: roleRef ${ref.kind} ${ref.name} is not in the policy`);
        // (system:node has none, as upstream's.)
        if (o.subjects !== undefined && !Array.isArray(o.subjects)) out.push(`${at}: subjects must be a list`);
      } else {
        for (const [j, r] of (o.rules ?? []).entries()) if (!Array.isArray(r.verbs) || r.verbs.length === 0) out.push(`${at}: rules[${j}] has no verbs`);
      }
    }
  }
  return out;
}

/** Names in upstream's fixtures and not here, and the other way round (the fixtures are Lists of the objects). */
function compareWithUpstream(dir) {
  if (!dir) {
    console.error('--upstream needs the testdata directory');
    process.exit(2);
  }
  const files = { clusterRoles: ['cluster-roles.yaml', 'controller-roles.yaml'], clusterRoleBindings: ['cluster-role-bindings.yaml', 'controller-role-bindings.yaml'], roles: ['namespace-roles.yaml'], roleBindings: ['namespace-role-bindings.yaml'] };
  let differences = 0;
  for (const [k, names] of Object.entries(files)) {
    const theirs = new Set();
    for (const f of names) for (const item of YAML.parse(readFileSync(join(dir, f), 'utf8')).items ?? []) theirs.add(`${item.metadata.namespace ?? ''}/${item.metadata.name}`);
    const ours = new Set(policy[k].map((o) => `${o.namespace ?? ''}/${o.name}`));
    const report = (n, where) => {
      differences++;
      console.log(`${k}: ${n} only ${where}`);
    };
    for (const n of theirs) if (!ours.has(n)) report(n, 'upstream');
    for (const n of ours) if (!theirs.has(n)) report(n, 'here');
  }
  console.log(`${differences} difference(s) with upstream's fixtures (bootstrap-policy.yaml's header says which are meant)`);
}
