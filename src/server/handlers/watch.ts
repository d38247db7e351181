/**
 * Watch streams: newline-delimited JSON events, each serialized once per
 * version and shared by every watcher. A resourceVersion older than the
 * cache's window gets a 200 and one ERROR event with a 410 Expired Status.
 */
import type { CacheEvent, CacheEventType } from '../../cache/watch-cache.js';
import { stringifyJson } from '../../machinery/json.js';
import { memoJson } from '../../registry/json-memo.js';
import { statusOf } from '../respond.js';
import { groupVersion, type HandlerContext } from './context.js';
import { parseListParams } from './list-options.js';
import { tableOptions } from './read.js';
import { tableForWatchEvent } from '../../printing/index.js';
import type { KObject } from '../../registry/types.js';
import { SlowWatcherError } from '../../cache/errors.js';

/** A watcher whose socket holds more unsent bytes than this is dropped. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** setTimeout's longest delay; a longer watch timeout would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Events waiting for a conversion before a watcher counts as too slow. */
const MAX_QUEUED_CONVERSIONS = 1000;
const EVENT_END = Buffer.from('}\n');

/**
 * The keys of an event's serialized lines in its memo, per API version: strings shared by
 * every watcher, so a million deliveries look them up by identity, where a key built per
 * delivery is flattened, hashed and compared by content each time.
 */
const memoKeysByVersion = new Map<string, Record<CacheEventType, string>>();

function eventMemoKeys(apiVersion: string): Record<CacheEventType, string> {
  let keys = memoKeysByVersion.get(apiVersion);
  if (keys === undefined) {
    if (memoKeysByVersion.size >= 4096) memoKeysByVersion.clear();
    keys = { ADDED: `${apiVersion}|ADDED`, MODIFIED: `${apiVersion}|MODIFIED`, DELETED: `${apiVersion}|DELETED` };
    memoKeysByVersion.set(apiVersion, keys);
  }
  return keys;
}

export async function handleWatch(ctx: HandlerContext): Promise<void> {
  const { endpoint, req } = ctx;
  const res = ctx.res;
  const params = parseListParams(ctx);
  const apiVersion = groupVersion(endpoint.group, endpoint.version);
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { 'Content-Type': 'application/json' });
  };
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const finish = () => {
    if (!res.writableEnded) res.end();
    done();
  };

  const table = ctx.output.format === 'table' ? tableOptions(ctx) : undefined;
  let headersSent = false;
  const encodeObject = (event: CacheEvent<KObject>): string | Buffer => {
    if (!table) return memoJson(event.object, endpoint.version, endpoint.toVersion);
    // Column definitions go with a watcher's first event only.
    const opts = { ...table, noHeaders: headersSent };
    headersSent = true;
    return stringifyJson(tableForWatchEvent(endpoint.table!, endpoint.toVersion(event.object), opts));
  };
  const memoKeys = eventMemoKeys(apiVersion);
  const writeEvent = (type: CacheEventType, event: CacheEvent<KObject>) => {
    start();
    const key = table ? `${memoKeys[type]}|table|${table.version}|${table.includeObject}|${headersSent}` : memoKeys[type];
    let line = event.memo?.get(key) as Buffer | undefined;
    if (!line) {
      const object = encodeObject(event);
      line = Buffer.concat([Buffer.from(`{"type":"${type}","object":`), typeof object === 'string' ? Buffer.from(object) : object, EVENT_END]);
      (event.memo ??= new Map()).set(key, line);
    } else if (table) {
      headersSent = true;
    }
    // The events of one commit arrive in one tick: they go out as one write.
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    res.write(line);
  };
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  let chain = Promise.resolve();
  let queued = 0;
  let watcher: { close(): void } | undefined;
  try {
    watcher = await endpoint.store.watch(
      { namespace: ctx.info.namespace, afterRevision: params.watchFrom, filter: params.store.filter, bookmarks: params.bookmarks },
      {
        onEvent(type: CacheEventType, event: CacheEvent<KObject>) {
          if (res.destroyed || res.writableEnded) return false;
          if (!endpoint.prepare) {
            writeEvent(type, event);
            return res.writableLength < MAX_BUFFERED_BYTES;
          }
          // Conversions that take time (webhooks) run one event after another, keeping the order.
          if (queued >= MAX_QUEUED_CONVERSIONS) return false;
          queued++;
          const prepare = endpoint.prepare;
          chain = chain.then(async () => {
            try {
              await prepare([event.object]);
              if (!res.destroyed && !res.writableEnded) writeEvent(type, event);
            } catch (err) {
              if (!res.writableEnded) res.write(`{"type":"ERROR","object":${stringifyJson(statusOf(err).toStatus())}}\n`);
              watcher?.close();
            } finally {
              queued--;
            }
          });
          return true;
        },
        onBookmark(revision: number) {
          if (res.destroyed || res.writableEnded) return false;
          start();
          res.write(`{"type":"BOOKMARK","object":{"kind":"${endpoint.names.kind}","apiVersion":"${apiVersion}","metadata":{"resourceVersion":"${revision}","creationTimestamp":null}}}\n`);
          return true;
        },
        onClose(err?: Error) {
          if (err && !(err instanceof SlowWatcherError) && !res.writableEnded) {
            start();
            res.write(`{"type":"ERROR","object":${stringifyJson(statusOf(err).toStatus())}}\n`);
          }
          finish();
        },
      },
    );
  } catch (err) {
    const status = statusOf(err);
    if (status.code !== 410) throw err;
    start();
    res.write(`{"type":"ERROR","object":${stringifyJson(status.toStatus())}}\n`);
    finish();
    return;
  }
  start();
  // Send the 200 and headers now, so clients see the watch established before any event.
  res.flushHeaders();
  // As upstream: timeoutSeconds when given, else --min-request-timeout randomised up to twice that.
  const seconds = params.timeoutSeconds ?? ctx.minRequestTimeoutSeconds * (1 + Math.random());
  const timer = setTimeout(() => watcher?.close(), Math.min(seconds * 1000, MAX_TIMER_MS));
  const onGone = () => watcher?.close();
  req.once('close', onGone);
  res.once('close', onGone);
  await finished;
  clearTimeout(timer);
  req.off('close', onGone);
}

