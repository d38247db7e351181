/**
 * `kapi migrate-storage <crd>`: rewrite every object of a CRD in its current
 * storage version (a read and an unchanged write through the storage version's
 * endpoint), then trim status.storedVersions to that version, so older versions
 * can be removed from the CRD safely. Works against a running server.
 */
import type { KubeClient } from './kube-client.js';
import type { KObject } from '../api/object.js';

export interface MigrationResult {
  storageVersion: string;
  migrated: number;
  storedVersions: string[];
}

export async function migrateStorage(client: KubeClient, crdName: string, log: (line: string) => void = () => {}): Promise<MigrationResult> {
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crdName)}`;
  const got = await client.request('GET', crdPath);
  if (got.status !== 200) throw new Error(got.json?.message ?? `GET ${crdPath}: ${got.status}`);
  const crd = got.json;
  const storageVersion: string = crd.spec.versions.find((v: KObject) => v.storage).name;
  const base = `/apis/${crd.spec.group}/${storageVersion}/${crd.spec.names.plural}`;
  let migrated = 0;
  let cont = '';
  do {
    const page = await client.request('GET', `${base}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    if (page.status !== 200) throw new Error(page.json?.message ?? `GET ${base}: ${page.status}`);
    for (const item of page.json.items) {
      if (await rewrite(client, crd, storageVersion, item)) migrated++;
    }
    cont = page.json.metadata?.continue ?? '';
  } while (cont);
  log(`migrated ${migrated} objects of ${crdName} to ${crd.spec.group}/${storageVersion}`);
  const patched = await client.request('PATCH', `${crdPath}/status`, { status: { storedVersions: [storageVersion] } }, 'application/merge-patch+json');
  if (patched.status !== 200) throw new Error(patched.json?.message ?? `PATCH ${crdPath}/status: ${patched.status}`);
  log(`status.storedVersions is now [${patched.json.status.storedVersions.join(', ')}]`);
  return { storageVersion, migrated, storedVersions: patched.json.status.storedVersions };
}

/** PUT the object back unchanged; on a conflict, read it again and retry. Returns false when it is gone. */
async function rewrite(client: KubeClient, crd: KObject, version: string, item: KObject): Promise<boolean> {
  const ns = item.metadata.namespace;
  const path = `/apis/${crd.spec.group}/${version}/${ns ? `namespaces/${ns}/` : ''}${crd.spec.names.plural}/${item.metadata.name}`;
  let obj = item;
  for (let attempt = 0; attempt < 10; attempt++) {
    const put = await client.request('PUT', path, obj);
    if (put.status === 200) return true;
    if (put.status === 404) return false;
    if (put.status !== 409) throw new Error(put.json?.message ?? `PUT ${path}: ${put.status}`);
    const fresh = await client.request('GET', path);
    if (fresh.status === 404) return false;
    obj = fresh.json;
  }
  throw new Error(`${path}: kept conflicting`);
}
