/**
 * --admission-control-config-file: an AdmissionConfiguration (apiserver.config.k8s.io/v1) that gives admission
 * plugins their configuration, each inline (`configuration`) or in a file of its own (`path`, relative to the
 * configuration file's folder), as kube-apiserver's ReadAdmissionConfiguration reads it. The plugins take what
 * is theirs by name (AdmissionContext.pluginConfig); kapi reads PodSecurity's.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parseDocument } from 'yaml';
import { isRecord } from '../util/json-object.js';

const ADMISSION_CONFIG_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1alpha1', 'apiserver.k8s.io/v1alpha1'];

function readYaml(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`unable to read admission control configuration from ${JSON.stringify(path)} [${(err as Error).message}]`);
  }
  try {
    return parseDocument(text, { uniqueKeys: false }).toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new Error(`unable to decode ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
}

/** The file's plugin configurations by plugin name. */
export function readAdmissionConfiguration(file: string): Map<string, unknown> {
  const doc = readYaml(file);
  const d = isRecord(doc) ? doc : {};
  if (d.kind !== 'AdmissionConfiguration' || !ADMISSION_CONFIG_VERSIONS.includes(String(d.apiVersion))) {
    throw new Error(`${file}: no kind "${String(d.kind ?? '')}" is registered for version "${String(d.apiVersion ?? '')}": kapi reads an AdmissionConfiguration (apiserver.config.k8s.io/v1)`);
  }
  const out = new Map<string, unknown>();
  const plugins = Array.isArray(d.plugins) ? d.plugins : [];
  plugins.forEach((p, i) => {
    const entry = isRecord(p) ? p : {};
    const name = typeof entry.name === 'string' ? entry.name : '';
    if (name === '') throw new Error(`${file}: plugins[${i}].name: Required value`);
    if (out.has(name)) throw new Error(`${file}: plugins[${i}].name: Duplicate value: ${JSON.stringify(name)}`);
    if (entry.configuration !== undefined && entry.configuration !== null) out.set(name, entry.configuration);
    else if (typeof entry.path === 'string' && entry.path !== '') out.set(name, readYaml(isAbsolute(entry.path) ? entry.path : join(dirname(file), entry.path)));
    else out.set(name, undefined);
  });
  return out;
}
