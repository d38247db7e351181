/**
 * Scaffolding, as apiserver-boot's: `kapi init` makes a TypeScript project that depends on kapi (a resources
 * module, a controller manager, a test), `kapi create resource` adds a resource (its versioned type and
 * strategy, its controller and its test) and registers it, and `kapi build config` writes the manifests to
 * run the project on a cluster: kapi serving the resources (etcd as a StatefulSet), the controller manager,
 * their RBAC, and APIServices for aggregation. The project's `npm test` passes right after generation.
 *
 * The project keeps what it is made of in `kapi.json` (domain and resources); the registration files are
 * written from it each time, the files of each resource only once (they are the user's to edit).
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';

export interface ProjectFile {
  name: string;
  domain: string;
  /** `version` is the first (its file defines the resource); `versions` the ones `kapi create api` added after it. */
  resources: Array<{ group: string; version: string; kind: string; scope?: 'Cluster'; versions?: string[] }>;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The directory kapi itself is installed in (the generated project depends on it). */
function kapiRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).name === 'kapi') return dir;
    dir = dirname(dir);
  }
  throw new Error('cannot find the kapi package this command runs from');
}

/**
 * How a new project at `dir` depends on kapi: `spec` when given (`--kapi`: a version range, a tarball, a directory);
 * else as the project that has kapi installed depends on it (kapi from a tarball or the registry, under
 * node_modules: that project's spec, a `file:` path made relative to `dir`), else the kapi checkout the command runs
 * from (a directory). `directory`: npm links it and would run its `prepare` (a full build) on every install.
 */
export function kapiDependency(dir: string, spec?: string): { spec: string; directory: boolean } {
  const target = resolve(dir);
  const fromFile = (path: string) => {
    const rel = relative(target, path) || '.';
    const directory = existsSync(path) && statSync(path).isDirectory();
    return { spec: `file:${rel}`, directory };
  };
  if (spec !== undefined) return spec.startsWith('file:') ? fromFile(resolve(spec.slice(5))) : existsSync(spec) ? fromFile(resolve(spec)) : { spec, directory: false };
  const root = kapiRoot();
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  if (basename(dirname(root)) !== 'node_modules') return fromFile(root);
  // Installed: the installing project's package.json says from where.
  const project = dirname(dirname(root));
  const pkgFile = join(project, 'package.json');
  const pkg = existsSync(pkgFile) ? (JSON.parse(readFileSync(pkgFile, 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> }) : {};
  const installed = pkg.dependencies?.kapi ?? pkg.devDependencies?.kapi;
  if (installed?.startsWith('file:')) return fromFile(resolve(project, installed.slice(5)));
  return { spec: installed ?? `^${version}`, directory: false };
}

export function write(root: string, path: string, content: string, overwrite: boolean, written: string[]): void {
  const file = join(root, path);
  if (!overwrite && existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  written.push(path);
}

export function readProject(dir: string): ProjectFile {
  const file = join(dir, 'kapi.json');
  if (!existsSync(file)) throw new Error(`${resolve(dir)} is not a kapi project (no kapi.json): make one with kapi init`);
  return JSON.parse(readFileSync(file, 'utf8')) as ProjectFile;
}

const lower = (kind: string) => kind.toLowerCase();
const fullGroup = (p: ProjectFile, group: string) => `${group}.${p.domain}`;
const apiPath = (r: ProjectFile['resources'][number]) => `src/apis/${r.group}/${r.version}/${lower(r.kind)}.js`;

/** `kapi init <dir> --domain <domain>`: a new project. Returns the files written. */
export function initProject(dir: string, opts: { domain: string; name?: string; kapi?: string }): string[] {
  if (!DNS_SUBDOMAIN.test(opts.domain) || !opts.domain.includes('.')) throw new Error(`--domain ${JSON.stringify(opts.domain)}: a DNS domain with a dot, e.g. example.com`);
  const name = opts.name ?? basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  if (!DNS_LABEL.test(name)) throw new Error(`project name ${JSON.stringify(name)}: lower case letters, digits and dashes (give one with --name)`);
  if (existsSync(join(dir, 'kapi.json'))) throw new Error(`${resolve(dir)} has a kapi project already`);
  const kapi = kapiDependency(dir, opts.kapi);
  const project: ProjectFile = { name, domain: opts.domain, resources: [] };
  const written: string[] = [];
  const pkg = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      build: 'tsc -p .',
      test: 'npm run build && node --test dist/test/',
      // exec: the server is npm's child, so stopping \`npm run serve\` stops it.
      serve: 'npm run build && exec kapi serve --resources dist/src/resources.js',
      start: 'node dist/src/main.js',
    },
    dependencies: { kapi: kapi.spec },
    devDependencies: { typescript: '~6.0', '@types/node': '^20.19.0' },
  };
  write(dir, 'package.json', `${JSON.stringify(pkg, null, 2)}\n`, false, written);
  const tsconfig = {
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, outDir: 'dist', rootDir: '.', types: ['node'] },
    include: ['src', 'test'],
  };
  write(dir, 'tsconfig.json', `${JSON.stringify(tsconfig, null, 2)}\n`, false, written);
  // config/ is the project's (kustomize bases it edits), committed with it.
  write(dir, '.gitignore', 'node_modules/\ndist/\n.kapi/\n', false, written);
  // kapi from a directory: npm would run its `prepare` (a full rebuild of kapi) on every install. From a tarball or
  // the registry, install scripts run (better-sqlite3 gets its native module).
  if (kapi.directory) write(dir, '.npmrc', 'ignore-scripts=true\n', false, written);
  write(dir, 'kapi.json', `${JSON.stringify(project, null, 2)}\n`, false, written);
  written.push(...writeRegistration(dir, project));
  write(dir, 'src/main.ts', mainFile(project), false, written);
  write(dir, 'Dockerfile', DOCKERFILE, false, written);
  write(dir, '.dockerignore', 'node_modules/\ndist/\n.kapi/\nconfig/\n', false, written);
  write(dir, 'test/server.test.ts', SERVER_TEST, false, written);
  write(dir, 'README.md', readme(project), false, written);
  return written;
}

/** `kapi create resource --group <g> --version <v> --kind <Kind>`: a resource, its controller and its test. */
export function createResource(dir: string, opts: { group: string; version: string; kind: string; cluster?: boolean }): string[] {
  const p = readProject(dir);
  if (!DNS_LABEL.test(opts.group)) throw new Error(`--group ${JSON.stringify(opts.group)}: a lower case DNS label (the group becomes <group>.${p.domain})`);
  if (!/^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(opts.version)) throw new Error(`--version ${JSON.stringify(opts.version)}: v1, v1beta1, v2alpha1...`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(opts.kind)) throw new Error(`--kind ${JSON.stringify(opts.kind)}: UpperCamelCase, e.g. Foo`);
  if (p.resources.some((r) => r.group === opts.group && r.kind === opts.kind)) throw new Error(`${opts.kind}.${fullGroup(p, opts.group)} exists already`);
  const r: ProjectFile['resources'][number] = { group: opts.group, version: opts.version, kind: opts.kind, ...(opts.cluster ? { scope: 'Cluster' as const } : {}) };
  p.resources.push(r);
  const written: string[] = [];
  const k = lower(r.kind);
  write(dir, `src/apis/${r.group}/${r.version}/${k}.ts`, resourceFile(p, r), false, written);
  write(dir, `src/controllers/${k}.ts`, controllerFile(r), false, written);
  write(dir, `test/${k}.test.ts`, testFile(p, r), false, written);
  write(dir, 'kapi.json', `${JSON.stringify(p, null, 2)}\n`, true, written);
  written.push(...writeRegistration(dir, p));
  return written;
}

/** The registration files, from kapi.json: every resource and every controller. */
/**
 * `kapi create api --group <g> --kind <Kind> --version <v2> [--storage]`: another version of a resource, as a copy of
 * the first version's schema, converted through the internal form (the first version's type until the new file says
 * how with toInternal/fromInternal); `--storage` makes it the version objects are stored in. The resource's file gets
 * the version in its list when it still reads as generated (else the command says what to add).
 */
export function createApi(dir: string, opts: { group: string; kind: string; version: string; storage?: boolean }): string[] {
  const p = readProject(dir);
  const r = p.resources.find((x) => x.group === opts.group && x.kind === opts.kind);
  if (!r) throw new Error(`${opts.kind}.${fullGroup(p, opts.group)} is not a resource of this project: make it with kapi create resource`);
  if (!/^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(opts.version)) throw new Error(`--version ${JSON.stringify(opts.version)}: v1, v1beta1, v2alpha1...`);
  if (opts.version === r.version || r.versions?.includes(opts.version)) throw new Error(`${opts.kind}.${fullGroup(p, opts.group)} has version ${opts.version} already`);
  const k = lower(r.kind);
  const defining = join(dir, `src/apis/${r.group}/${r.version}/${k}.ts`);
  const text = readFileSync(defining, 'utf8');
  const list = /^( {2}versions: \[)([^\]\n]*)(\],)$/m.exec(text);
  if (!list) throw new Error(`${relative(dir, defining)}: no \`versions: [...]\` line to add ${opts.version} to; add it there by hand (import { ${opts.version} } from '../${opts.version}/${k}.js')`);
  const written: string[] = [];
  write(dir, `src/apis/${r.group}/${opts.version}/${k}.ts`, versionFile(p, r, opts.version, !!opts.storage), false, written);
  const imported = text.replace(/^(import [^\n]*'kapi\/sdk';\n)/m, `$1import { ${opts.version} } from '../${opts.version}/${k}.js';\n`);
  writeFileSync(defining, imported.replace(list[0], `${list[1]}${list[2]}, ${opts.version}${list[3]}`));
  written.push(relative(dir, defining));
  r.versions = [...(r.versions ?? []), opts.version];
  write(dir, 'kapi.json', `${JSON.stringify(p, null, 2)}\n`, true, written);
  return written;
}

/**
 * `kapi create webhook --group <g> --kind <Kind> [--defaulting] [--programmatic-validation]` (kubebuilder's create
 * webhook): stubs of the strategy's hooks in `src/webhooks/<kind>.ts`, spread into the resource's strategy (so
 * they win over hooks written there), and their test. kapi runs the hooks in its storage strategy; in CRD mode
 * (`kapi generate manifests`) the manager serves them as the admission webhooks of the CRD.
 */
export function createWebhook(dir: string, opts: { group: string; kind: string; defaulting?: boolean; programmaticValidation?: boolean }): string[] {
  const p = readProject(dir);
  const r = p.resources.find((x) => x.group === opts.group && x.kind === opts.kind);
  if (!r) throw new Error(`${opts.kind}.${fullGroup(p, opts.group)} is not a resource of this project: make it with kapi create resource`);
  if (!opts.defaulting && !opts.programmaticValidation) throw new Error('say which hooks: --defaulting, --programmatic-validation, or both (conversion is a version\'s toInternal/fromInternal: kapi create api)');
  const k = lower(r.kind);
  const defining = join(dir, `src/apis/${r.group}/${r.version}/${k}.ts`);
  const text = readFileSync(defining, 'utf8');
  const block = /^( {2}strategy: \{\n)([\s\S]*?)(^ {2}\},\n\}\);)/m.exec(text);
  if (!block) throw new Error(`${relative(dir, defining)}: no generated \`strategy: {...}\` block to add the hooks to; add \`...${k}Webhooks\` to the resource's strategy by hand (import { ${k}Webhooks } from '../../../webhooks/${k}.js')`);
  if (text.includes(`...${k}Webhooks`)) throw new Error(`${r.kind} has webhooks already (src/webhooks/${k}.ts)`);
  // The generated example rule moves into the webhook file; a hook of the project's own is never overridden unseen.
  let hooks = block[2];
  const generatedRule = hooks.includes(GENERATED_VALIDATE) && !!opts.programmaticValidation;
  if (generatedRule) hooks = hooks.replace(`${GENERATED_VALIDATE}\n`, '');
  for (const [hook, asked, flag] of [['validate', opts.programmaticValidation, '--programmatic-validation'], ['validateUpdate', opts.programmaticValidation, '--programmatic-validation'], ['defaulting', opts.defaulting, '--defaulting']] as const) {
    if (asked && new RegExp(`^ {4}${hook}\\b`, 'm').test(hooks)) throw new Error(`${relative(dir, defining)}: the strategy has a ${hook} hook of its own: move it into the webhook file by hand, or leave out ${flag}`);
  }
  const written: string[] = [];
  write(dir, `src/webhooks/${k}.ts`, webhookFile(p, r, !!opts.defaulting, !!opts.programmaticValidation, generatedRule), false, written);
  write(dir, `test/${k}-webhooks.test.ts`, webhookTestFile(r, !!opts.defaulting, !!opts.programmaticValidation), false, written);
  const imported = text.replace(/^(import [^\n]*'kapi\/sdk';\n)/m, `$1import { ${k}Webhooks } from '../../../webhooks/${k}.js';\n`);
  writeFileSync(defining, imported.replace(block[0], `${block[1]}${hooks}    // The hooks of kapi create webhook (src/webhooks/${k}.ts).\n    ...${k}Webhooks,\n${block[3]}`));
  written.push(relative(dir, defining));
  return written;
}

/** The example rule `kapi create resource` writes into the strategy. */
const GENERATED_VALIDATE = "    validate: (obj) => (obj.spec.replicas > 1000 ? [fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be no more than 1000')] : []),";

function webhookFile(p: ProjectFile, r: ProjectFile['resources'][number], defaulting: boolean, validation: boolean, exampleRule: boolean): string {
  const k = lower(r.kind);
  const hooks: string[] = [];
  if (defaulting) {
    hooks.push(`  /**
   * Defaults for what the schema's defaults cannot say, on the object as written (\`version\` is the version it
   * was written in); a mutating admission webhook in CRD mode. Runs on create and update, not on /status writes.
   */
  defaulting(obj, version) {
    // e.g. obj.metadata.labels = { ...obj.metadata.labels, 'app.kubernetes.io/managed-by': '${p.name}' };
  },`);
  }
  if (validation) {
    hooks.push(`  /** Checks a new ${r.kind}; each field error refuses it with 422 (a validating admission webhook in CRD mode). */
  validate(obj) {
    const errors: FieldError[] = [];${exampleRule ? "\n    if (obj.spec.replicas > 1000) errors.push(fieldError.invalid('spec.replicas', obj.spec.replicas, 'must be no more than 1000'));" : ''}
    // e.g. if (obj.spec.replicas === 13) errors.push(fieldError.invalid('spec.replicas', obj.spec.replicas, 'is unlucky'));
    return errors;
  },
  /** Checks an update against the stored ${r.kind}. */
  validateUpdate(obj, old) {
    const errors: FieldError[] = [];
    // e.g. if (obj.spec.replicas < old.spec.replicas) errors.push(fieldError.forbidden('spec.replicas', 'may not shrink'));
    return errors;
  },`);
  }
  const imports = validation ? `import { fieldError, type FieldError, type ResourceStrategy } from 'kapi/sdk';` : `import type { ResourceStrategy } from 'kapi/sdk';`;
  return `/**
 * ${r.kind}'s admission hooks, made by kapi create webhook: kapi runs them in the resource's storage strategy; in CRD
 * mode the manager serves them as the CRD's admission webhooks (kapi generate manifests writes their configurations).
 */
${imports}
import type { ${r.kind} } from '../apis/${r.group}/${r.version}/${k}.js';
${validation ? '\n// fieldError makes the errors: invalid, required, forbidden, notSupported, duplicate, tooLong...\n' : ''}
export const ${k}Webhooks: ResourceStrategy<${r.kind}> = {
${hooks.join('\n')}
};
`;
}

function webhookTestFile(r: ProjectFile['resources'][number], defaulting: boolean, validation: boolean): string {
  const k = lower(r.kind);
  const ns = r.scope === 'Cluster' ? 'undefined' : "'default'";
  return `import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestServer, type TestServer } from 'kapi/testing';
import { ${r.kind}, type ${r.kind}Input } from '../src/apis/${r.group}/${r.version}/${k}.js';
import { ${k}Webhooks } from '../src/webhooks/${k}.js';

let server: TestServer;
const apiVersion = \`\${${r.kind}.gvr.group}/\${${r.kind}.gvr.version}\`;
before(async () => {
  server = await startTestServer({ resources: [${r.kind}] });
});
after(() => server.stop());

it('has its webhooks in the ${r.kind} strategy', () => {
${defaulting ? `  assert.equal(${r.kind}.input.strategy?.defaulting, ${k}Webhooks.defaulting);
` : ''}${validation ? `  assert.equal(${r.kind}.input.strategy?.validate, ${k}Webhooks.validate);
` : ''}});

it('admits a valid ${r.kind} through them', async () => {
  const ${k}s = server.client().resource<${r.kind}, ${r.kind}Input>(${r.kind});
  const created = await ${k}s.create(${ns}, { apiVersion, kind: '${r.kind}', metadata: { name: 'through-webhooks' }, spec: {} });
  assert.equal(created.metadata.name, 'through-webhooks');
  // Add what your hooks default and refuse here.
});
`;
}

function versionFile(p: ProjectFile, r: ProjectFile['resources'][number], v: string, storage: boolean): string {
  return `/**
 * ${r.kind} (${fullGroup(p, r.group)}/${v}): another version of ${r.kind}, made by kapi create api. Objects convert
 * between versions through the internal form, ${r.version}'s type: while this schema is the same, nothing is needed;
 * when it differs, add toInternal(obj) and fromInternal(internal) here (a conversion webhook where a cluster's own
 * API server serves the CRD).
 */
import { t, version, type TypeOf } from 'kapi/sdk';

export const ${v} = version('${v}', {
  spec: t.object({
    replicas: t.integer({ minimum: 0, default: 1 }),
  }),
  status: t.object({
    observedGeneration: t.optional(t.integer()),
    conditions: t.optional(t.conditions()),
  }),
  printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }],${storage ? '\n  // Objects are stored in this version.\n  storage: true,' : ''}
});

export type ${r.kind}${v.toUpperCase()} = TypeOf<typeof ${v}>;
`;
}

function writeRegistration(dir: string, p: ProjectFile): string[] {
  const written: string[] = [];
  const imports = p.resources.map((r) => `import { ${r.kind} } from './${apiPath(r).slice(4)}';`);
  write(
    dir,
    'src/resources.ts',
    `// Written by kapi create resource from kapi.json: the project's resources (kapi serve --resources dist/src/resources.js).\nimport type { ResourceDefinition } from 'kapi/sdk';\n${imports.join('\n')}${imports.length ? '\n' : ''}\n// Each of its own type.\n// eslint-disable-next-line @typescript-eslint/no-explicit-any\nconst resources: ResourceDefinition<any>[] = [${p.resources.map((r) => r.kind).join(', ')}];\nexport default resources;\n`,
    true,
    written,
  );
  const controllers = p.resources.map((r) => `import { ${lower(r.kind)}Controller } from './${lower(r.kind)}.js';`);
  write(
    dir,
    'src/controllers/index.ts',
    `// Written by kapi create resource from kapi.json: the project's controllers, for a Manager.\nimport type { ControllerOptions, Manager } from 'kapi/sdk';\n${controllers.join('\n')}${controllers.length ? '\n' : ''}\nexport function controllers(manager: Manager): ControllerOptions[] {\n  return [${p.resources.map((r) => `${lower(r.kind)}Controller(manager)`).join(', ')}];\n}\n`,
    true,
    written,
  );
  return written;
}

function resourceFile(p: ProjectFile, r: ProjectFile['resources'][number]): string {
  return `/**
 * ${r.kind} (${fullGroup(p, r.group)}/${r.version}): its schema (the TypeScript type is derived from it) and its
 * storage strategy, as apiserver-builder's <kind>_types.go.
 */
import { defineResource, fieldError, t, version, type InputOf, type TypeOf } from 'kapi/sdk';

export const ${r.version} = version('${r.version}', {
  spec: t.object({
    // Specify desired object state and canonical object information here.
    replicas: t.integer({ minimum: 0, default: 1 }),
  }),
  status: t.object({
    // Publish object status values here.
    observedGeneration: t.optional(t.integer()),
    conditions: t.optional(t.conditions()),
  }),
  printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' }],
});

// As read (replicas, which has a default, always there) and as written (replicas may be left out).
export type ${r.kind} = TypeOf<typeof ${r.version}>;
export type ${r.kind}Input = InputOf<typeof ${r.version}>;

export const ${r.kind} = defineResource<${r.kind}>({
  group: '${fullGroup(p, r.group)}',
  kind: '${r.kind}',${r.scope === 'Cluster' ? "\n  scope: 'Cluster'," : ''}
  versions: [${r.version}],
  strategy: {
    // The storage strategy's hooks, as apiserver-builder's DefaultingFunction, PrepareForCreate, Validate,
    // Canonicalize, PrepareForUpdate and ValidateUpdate: defaulting(obj, version), prepareForCreate(obj),
    // validate(obj), canonicalize(obj), prepareForUpdate(obj, old), validateUpdate(obj, old).
${GENERATED_VALIDATE}
  },
});
`;
}

function controllerFile(r: ProjectFile['resources'][number]): string {
  const k = lower(r.kind);
  return `/**
 * The ${r.kind} controller: level-based, it gets a key and drives what exists toward what the ${r.kind} asks for.
 */
import { setStatusCondition, StatusError, type Condition, type ControllerOptions, type Manager } from 'kapi/sdk';
import { ${r.kind} } from '../${apiPath(r).slice(4)}';

export function ${k}Controller(manager: Manager): ControllerOptions {
  // Reads come from the manager's cache (its informer of ${r.kind}s), writes go to the API server.
  const ${k}s = manager.resource<${r.kind}>(${r.kind});
  return {
    name: '${k}',
    for: ${r.kind},
    async reconcile({ namespace, name }) {
      let obj: ${r.kind};
      try {
        obj = await ${k}s.get(namespace, name);
      } catch (err) {
        if (err instanceof StatusError && err.code === 404) return;
        throw err;
      }
      // Reconcile here: read what exists, create or change what the spec asks for.
      const conditions: Condition[] = obj.status?.conditions ?? [];
      const changed = setStatusCondition(conditions, { type: 'Ready', status: 'True', reason: 'Reconciled', message: '', observedGeneration: obj.metadata.generation });
      if (changed || obj.status?.observedGeneration !== obj.metadata.generation) {
        await ${k}s.updateStatus(namespace, name, { ...obj, status: { ...obj.status, observedGeneration: obj.metadata.generation, conditions } });
      }
    },
  };
}
`;
}

function testFile(p: ProjectFile, r: ProjectFile['resources'][number]): string {
  const k = lower(r.kind);
  // Where its objects are: a namespace, or none for a cluster-scoped resource.
  const ns = r.scope === 'Cluster' ? 'undefined' : "'default'";
  return `import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Manager } from 'kapi/sdk';
import { startTestServer, type TestServer } from 'kapi/testing';
import { ${r.kind}, type ${r.kind}Input } from '../src/apis/${r.group}/${r.version}/${k}.js';
import { ${k}Controller } from '../src/controllers/${k}.js';

let server: TestServer;
let manager: Manager;
// The version the client addresses: the storage version (kapi create api --storage may change it).
const apiVersion = \`\${${r.kind}.gvr.group}/\${${r.kind}.gvr.version}\`;
before(async () => {
  server = await startTestServer({ resources: [${r.kind}] });
  manager = new Manager(server.client('${k}-controller'));
  manager.add(${k}Controller(manager));
  await manager.start();
});
after(async () => {
  await manager.stop();
  await server.stop();
});

it('reconciles a ${r.kind} to Ready', async () => {
  const ${k}s = server.client().resource<${r.kind}, ${r.kind}Input>(${r.kind});
  const created = await ${k}s.create(${ns}, { apiVersion, kind: '${r.kind}', metadata: { name: 'example' }, spec: {} });
  assert.equal(created.spec.replicas, 1, 'the schema default');
  for (let i = 0; i < 200; i++) {
    const obj = await ${k}s.get(${ns}, 'example');
    if (obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail('the ${r.kind} never became Ready');
});

it('refuses what its strategy refuses', async () => {
  const ${k}s = server.client().resource<${r.kind}, ${r.kind}Input>(${r.kind});
  await assert.rejects(${k}s.create(${ns}, { apiVersion, kind: '${r.kind}', metadata: { name: 'too-big' }, spec: { replicas: 1001 } }), /must be no more than 1000/);
});
`;
}

function mainFile(p: ProjectFile): string {
  return `/**
 * The controller manager: every controller of the project, against the API server a kubeconfig names
 * ($KUBECONFIG, ~/.kube/config, or --kubeconfig), with leader election on a Lease (--leader-elect), its health
 * probes on --health-probe-bind-address (/healthz, /readyz; default :8081) and its metrics on
 * --metrics-bind-address (/metrics; default 0, none), as a kubebuilder project's manager.
 */
import { connect, Manager, ping } from 'kapi/sdk';
import { controllers } from './controllers/index.js';
import resources from './resources.js';

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const client = connect({ kubeconfig: arg('--kubeconfig'), userAgent: 'controller-manager' });
const namespace = process.env.POD_NAMESPACE ?? 'default';
const webhookPort = arg('--webhook-port');
const manager = new Manager(client, {
  ...(process.argv.includes('--leader-elect') ? { leaderElection: { namespace, name: 'controller-manager' } } : {}),
  healthProbeBindAddress: arg('--health-probe-bind-address') ?? ':8081',
  metricsBindAddress: arg('--metrics-bind-address') ?? '0',
  // CRD mode (kapi generate manifests): the resources' hooks and conversions as webhooks, on a certificate the
  // manager makes and keeps in a Secret, its CA written into the configurations config/webhook has.
  ...(webhookPort
    ? {
        webhookServer: {
          resources,
          port: Number(webhookPort),
          selfSigned: {
            service: { namespace, name: '${p.name}-webhook-service' },
            mutatingWebhookConfigurations: ['${p.name}-mutating-webhook-configuration'],
            validatingWebhookConfigurations: ['${p.name}-validating-webhook-configuration'],
            conversionCrds: resources.filter((r) => r.versions.length > 1).map((r) => \`\${r.plural}.\${r.group}\`),
          },
        },
      }
    : {}),
});
manager.addHealthzCheck('healthz', ping);
manager.addReadyzCheck('readyz', ping);
for (const c of controllers(manager)) manager.add(c);
await manager.start();
process.stdout.write('controller manager running (probes ' + (manager.healthProbeAddress ?? 'off') + ', metrics ' + (manager.metricsAddress ?? 'off') + ')\\n');
const stop = async () => {
  await manager.stop();
  client.close();
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
`;
}

/** The project's image: built in one stage, run from its output and production dependencies as a non-root user. */
const DOCKERFILE = `# The project's image (the controller manager's, and kapi's when serving the resources):
#   docker build -t <registry>/<name>:<tag> .
# kapi comes from the registry: a dependency on a local tarball or directory is not in the build context.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json* ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 65532:65532
CMD ["node", "dist/src/main.js"]
`;

const SERVER_TEST = `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startTestServer } from 'kapi/testing';
import resources from '../src/resources.js';

it('serves the project\\'s resources', async () => {
  const server = await startTestServer({ resources });
  try {
    const ns = await server.client().resource({ group: '', version: 'v1', resource: 'namespaces' }).get(undefined, 'default');
    assert.equal(ns.metadata.name, 'default');
  } finally {
    await server.stop();
  }
});
`;

function readme(p: ProjectFile): string {
  return `# ${p.name}

Kubernetes-style APIs in TypeScript, served by kapi (domain \`${p.domain}\`).

\`\`\`sh
npm install
npx kapi create resource --group apps --version v1 --kind Foo   # a resource, its controller, its test
npm test                                                        # build, then run the tests on kapi's test server
npm run serve &                                                 # kapi serving the resources (./.kapi)
KUBECONFIG=.kapi/admin.kubeconfig npm start                     # the controllers against it
npx kapi build config --image <registry>/${p.name}:latest        # kapi serving them on a cluster, aggregated (./config)
\`\`\`

Or as CRDs on any cluster, the controllers in the manager (\`Dockerfile\` makes its image):

\`\`\`sh
npm run build && npx kapi generate manifests                    # config/crd, config/rbac (from the code), config/manager
kubectl apply -k config/crd                                     # the CRDs
kubectl apply -k config/default                                 # the CRDs, the manager's RBAC and Deployment
\`\`\`

- \`src/apis/<group>/<version>/<kind>.ts\`: a resource's schema and storage strategy;
- \`src/controllers/<kind>.ts\`: its controller;
- \`src/resources.ts\`, \`src/controllers/index.ts\`: written from \`kapi.json\` by \`kapi create resource\`.
`;
}

/** `kapi build config`: the manifests to run the project on a cluster, one YAML file per part. */
export function buildConfig(dir: string, opts: { image: string; namespace?: string; output?: string; storage?: 'etcd' | 'embedded' }): string[] {
  const p = readProject(dir);
  const ns = opts.namespace ?? `${p.name}-system`;
  const name = p.name;
  const out = opts.output ?? join(dir, 'config');
  const labels = { app: name };
  const etcd = (opts.storage ?? 'etcd') === 'etcd';
  const groups = [...new Set(p.resources.flatMap((r) => [r.version, ...(r.versions ?? [])].map((v) => `${fullGroup(p, r.group)}/${v}`)))].sort();
  const docs: Record<string, unknown[]> = {
    'namespace.yaml': [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
    'rbac.yaml': [
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } },
      // The apiserver delegates authentication and authorization to the cluster (aggregation).
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${name}:system:auth-delegator` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
        subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: `${name}:extension-apiserver-authentication-reader`, namespace: 'kube-system' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' },
        subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `${name}:controller` },
        rules: [
          ...groups.map((gv) => ({ apiGroups: [gv.split('/')[0]], resources: ['*'], verbs: ['*'] })),
          { apiGroups: [''], resources: ['configmaps', 'secrets', 'services', 'events'], verbs: ['*'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
          // The apiserver follows the cluster's namespaces (--kubeconfig=in-cluster).
          { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
          // It writes its CA into its own APIServices (--serving-cert-service), and follows them for new ones.
          { apiGroups: ['apiregistration.k8s.io'], resources: ['apiservices'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: ['apiregistration.k8s.io'], resources: ['apiservices'], verbs: ['update'], resourceNames: groups.map((gv) => `${gv.split('/')[1]}.${gv.split('/')[0]}`) },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${name}:controller` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${name}:controller` },
        subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      },
    ],
    'apiserver.yaml': [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `${name}-apiserver`, namespace: ns, labels: { ...labels, component: 'apiserver' } },
        spec: {
          replicas: etcd ? 2 : 1,
          selector: { matchLabels: { ...labels, component: 'apiserver' } },
          template: {
            metadata: { labels: { ...labels, component: 'apiserver' } },
            spec: {
              serviceAccountName: name,
              containers: [
                {
                  name: 'apiserver',
                  image: opts.image,
                  command: ['npx', 'kapi', 'serve'],
                  args: [
                    '--bind-address=0.0.0.0',
                    '--secure-port=6443',
                    '--data-dir=/var/lib/kapi',
                    '--resources=dist/src/resources.js',
                    // Behind the cluster's aggregator: its users, its RBAC and its namespaces, through the Pod's account.
                    '--authentication-kubeconfig=in-cluster',
                    '--authorization-kubeconfig=in-cluster',
                    '--kubeconfig=in-cluster',
                    // Its certificate, shared by the replicas, in the Secret ${name}-apiserver-cert; its CA in the APIServices.
                    `--serving-cert-service=${ns}/${name}-apiserver`,
                    ...(etcd ? [`--etcd-servers=http://etcd.${ns}.svc:2379`] : []),
                  ],
                  ports: [{ name: 'https', containerPort: 6443 }],
                  readinessProbe: { httpGet: { path: '/readyz', port: 6443, scheme: 'HTTPS' } },
                  livenessProbe: { httpGet: { path: '/livez', port: 6443, scheme: 'HTTPS' }, initialDelaySeconds: 15, periodSeconds: 20 },
                  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                  volumeMounts: [{ name: 'data', mountPath: '/var/lib/kapi' }],
                },
              ],
              volumes: [etcd ? { name: 'data', emptyDir: {} } : { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }],
            },
          },
        },
      },
      ...(etcd
        ? []
        : [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-data`, namespace: ns }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }]),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `${name}-apiserver`, namespace: ns },
        spec: { selector: { ...labels, component: 'apiserver' }, ports: [{ name: 'https', port: 443, targetPort: 6443 }] },
      },
    ],
    'controller-manager.yaml': [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: `${name}-controller-manager`, namespace: ns, labels: { ...labels, component: 'controller-manager' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { ...labels, component: 'controller-manager' } },
          template: {
            metadata: { labels: { ...labels, component: 'controller-manager' } },
            spec: {
              serviceAccountName: name,
              containers: [
                {
                  name: 'controller-manager',
                  image: opts.image,
                  // Metrics are plain HTTP without authentication: on the Pod's loopback only.
                  command: ['node', 'dist/src/main.js', '--leader-elect', '--health-probe-bind-address=:8081', '--metrics-bind-address=127.0.0.1:8080'],
                  env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
                  ports: [{ name: 'probes', containerPort: 8081 }],
                  // As a kubebuilder project's manager: probes, requests and limits, no privileges.
                  livenessProbe: { httpGet: { path: '/healthz', port: 8081 }, initialDelaySeconds: 15, periodSeconds: 20 },
                  readinessProbe: { httpGet: { path: '/readyz', port: 8081 }, initialDelaySeconds: 5, periodSeconds: 10 },
                  resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
                },
              ],
            },
          },
        },
      },
    ],
    'apiservice.yaml': groups.map((gv) => {
      const [group, version] = gv.split('/');
      return {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: `${version}.${group}` },
        spec: { group, version, groupPriorityMinimum: 2000, versionPriority: 10, service: { name: `${name}-apiserver`, namespace: ns, port: 443 } },
      };
    }),
    ...(etcd
      ? {
          'etcd.yaml': [
            {
              apiVersion: 'apps/v1',
              kind: 'StatefulSet',
              metadata: { name: 'etcd', namespace: ns },
              spec: {
                serviceName: 'etcd',
                replicas: 1,
                selector: { matchLabels: { app: 'etcd' } },
                template: {
                  metadata: { labels: { app: 'etcd' } },
                  spec: {
                    containers: [
                      {
                        name: 'etcd',
                        image: 'registry.k8s.io/etcd:3.5.21-0',
                        command: ['etcd', '--data-dir=/var/lib/etcd', '--listen-client-urls=http://0.0.0.0:2379', '--advertise-client-urls=http://etcd:2379'],
                        ports: [{ name: 'client', containerPort: 2379 }],
                        volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
                      },
                    ],
                  },
                },
                volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
              },
            },
            { apiVersion: 'v1', kind: 'Service', metadata: { name: 'etcd', namespace: ns }, spec: { clusterIP: 'None', selector: { app: 'etcd' }, ports: [{ name: 'client', port: 2379 }] } },
          ],
        }
      : {}),
  };
  mkdirSync(out, { recursive: true });
  const written: string[] = [];
  for (const [file, objects] of Object.entries(docs)) {
    if (objects.length === 0) continue;
    writeFileSync(join(out, file), objects.map((o) => stringify(o)).join('---\n'));
    written.push(join(relative(dir, out) || '.', file));
  }
  return written;
}
