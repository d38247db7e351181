/**
 * Parameter deduplication of OpenAPI v2 documents (kube-openapi's
 * deduplicateParameters): parameters every resource repeats (pretty, namespace,
 * the list options, ...) are published once under `parameters` as
 * `<name>-<hash>` and referenced as `#/parameters/<name>-<hash>`. The name
 * parameter, dryRun, fieldValidation and body parameters of a kind stay inline.
 * kapi's v3 documents share the same way, under `components.parameters`.
 */
import type { Parameter } from './parameters.js';
import { v2Parameter } from './routes.js';
import type { Schema } from './schema-types.js';

export class SharedParameters {
  private readonly byKey = new Map<string, string>();
  private readonly definitions = new Map<string, Schema>();
  private readonly parameters = new Map<string, Parameter>();
  private readonly byObject = new WeakMap<Parameter, string | null>();

  /** The shared name of a parameter, registering it on first use; undefined when it stays inline. */
  readonly refFor = (p: Parameter): string | undefined => {
    let known = this.byObject.get(p);
    if (known === undefined) this.byObject.set(p, (known = this.lookup(p) ?? null));
    return known ?? undefined;
  };

  private lookup(p: Parameter): string | undefined {
    if (p.name === 'name' && (p.in === 'path' || p.in === 'query')) return undefined;
    if (p.in === 'query' && (p.name === 'fieldValidation' || p.name === 'dryRun')) return undefined;
    if (p.in === 'body' && !p.schemaRef?.startsWith('io.k8s.apimachinery')) return undefined;
    const inline = v2Parameter(p);
    const key = JSON.stringify(inline);
    let name = this.byKey.get(key);
    if (!name) {
      name = `${p.name}-${fnvHash(key)}`;
      for (let i = 1; this.definitions.has(name); i++) name = `${p.name}-${i}`;
      this.byKey.set(key, name);
      this.definitions.set(name, inline);
      this.parameters.set(name, p);
    }
    return name;
  }

  /** Every shared parameter registered so far, by name, in its v2 form. */
  all(): ReadonlyMap<string, Schema> {
    return this.definitions;
  }

  /** Every shared parameter registered so far, by name. */
  allParameters(): ReadonlyMap<string, Parameter> {
    return this.parameters;
  }
}

/** base64url of the first 6 bytes of FNV-1 64 over the text (8 characters). */
function fnvHash(s: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of Buffer.from(s)) {
    h = BigInt.asUintN(64, h * 0x100000001b3n);
    h ^= BigInt(b);
  }
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(h);
  return bytes.subarray(0, 6).toString('base64url');
}
