/**
 * The data dir holds Secrets (state.db), keys and tokens: it is made 0700 and
 * its files 0600. One that already exists keeps its mode, with a warning at
 * start where others may read it (etcd insists on 0700 for its data dir).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Files beside state.db and in pki/ that must be private (certificates are public). */
const PRIVATE = /^(state\.db.*|admin\.token|admin\.kubeconfig|.*\.key)$/;

export async function ensurePrivateDir(dir: string, warn: (message: string) => void): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const wide: string[] = [];
  const check = async (path: string, max: number) => {
    const s = await stat(path).catch(() => undefined);
    if (s && (s.mode & 0o777 & ~max) !== 0) wide.push(`${path} (${(s.mode & 0o777).toString(8).padStart(4, '0')})`);
  };
  await check(dir, 0o700);
  for (const sub of [dir, join(dir, 'pki')]) {
    const names = await readdir(sub).catch(() => [] as string[]);
    for (const name of names) if (PRIVATE.test(name)) await check(join(sub, name), 0o600);
  }
  if (wide.length > 0) {
    warn(`kapi: warning: other users may read the data dir: ${wide.join(', ')}; the recommended permissions are 0700 for the directory and 0600 for its files (chmod -R go-rwx ${dir})`);
  }
}

/** Write via a synced temporary file and rename, so a crash never leaves a torn file. */
export async function writeFileAtomic(path: string, data: string, mode: number, durable = true): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data);
      if (durable) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}
