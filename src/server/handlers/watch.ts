/**
 * Watch streams: events framed by the negotiated serializer, each event's line
 * remembered per version and format and shared by every watcher. A
 * resourceVersion older than the cache's window gets a 200 and one ERROR event
 * with a 410 Expired Status.
 */
import { filteredEventType, type CacheEvent, type CacheEventType } from '../../cache/watch-cache.js';
import { statusOf } from '../respond.js';
import { groupVersion, type HandlerContext } from './context.js';
import { parseListParams } from './list-options.js';
import type { KObject } from '../../api/object.js';
import { SlowWatcherError } from '../../cache/errors.js';
import { WatchObjectEncoder } from '../output.js';

/** A watcher whose socket holds more unsent bytes than this is dropped. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
/** A watch's first events (a million objects: 600 MiB) go on once its client has read what is beyond this. */
const INITIAL_EVENTS_BUFFERED_BYTES = 1024 * 1024;
/** setTimeout's longest delay; a longer watch timeout would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Events waiting for a conversion before a watcher counts as too slow. */
const MAX_QUEUED_CONVERSIONS = 1000;

export async function handleWatch(ctx: HandlerContext): Promise<void> {
  const { endpoint, req } = ctx;
  const res = ctx.res;
  const params = parseListParams(ctx);
  const pre = params.store.filter;
  const inVersion = params.converted;
  const converted = inVersion && ((o: KObject) => (!pre || pre(o)) && inVersion(endpoint.toVersion(o)));
  const apiVersion = groupVersion(endpoint.group, endpoint.version);
  const serializer = ctx.output.serializer;
  const frame = serializer.frame!;
  const encoder = new WatchObjectEncoder(ctx);
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { 'Content-Type': serializer.streamMediaType! });
  };
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const finish = () => {
    if (!res.writableEnded) res.end();
    done();
  };

  const write = (line: Buffer) => {
    start();
    // The events of one commit arrive in one tick: they go out as one write.
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(uncork);
    }
    res.write(line);
  };
  const writeEvent = (type: CacheEventType, event: CacheEvent<KObject>) => {
    const key = encoder.memoKey(type);
    let line = event.memo?.get(key) as Buffer | undefined;
    if (!line) {
      line = frame(type, encoder.encode(event.object));
      (event.memo ??= new Map()).set(key, line);
    } else {
      encoder.sent();
    }
    write(line);
  };
  const writeStatusEvent = (err: unknown) => write(frame('ERROR', serializer.encode(statusOf(err).toStatus(), false)));
  let corked = false;
  // A wait for room (waitForRoom) ends when the client has read, or is gone.
  let wakeRoom: (() => void) | undefined;
  res.once('close', () => wakeRoom?.());
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  let chain = Promise.resolve();
  let queued = 0;
  let established = false;
  let watcher: { close(): void } | undefined;
  try {
    const initial = params.sendInitialEvents;
    watcher = await endpoint.store.watch(
      {
        namespace: ctx.info.namespace,
        name: params.store.name,
        afterRevision: params.watchFrom,
        // A selection on the converted object is made here, after the conversion.
        filter: converted ? undefined : params.store.filter,
        labels: converted ? undefined : params.store.labels,
        bookmarks: params.bookmarks,
        // Watch-list: the state at resourceVersion or newer (the latest for ""), its end marked by a bookmark;
        // sendInitialEvents=false without a resourceVersion starts from now.
        consistent: initial !== undefined && params.store.consistent,
        minRevision: initial ? params.store.minRevision : undefined,
        initialEventsEnd: initial === true,
        fromNow: initial === false && params.watchFrom === undefined,
      },
      {
        onEvent(type: CacheEventType, event: CacheEvent<KObject>, initial?: boolean) {
          if (res.destroyed || res.writableEnded) return false;
          if (!endpoint.prepare) {
            writeEvent(type, event);
            // The first events wait for a slow client (waitForRoom) rather than drop it.
            return initial === true || res.writableLength < MAX_BUFFERED_BYTES;
          }
          // Conversions that take time (webhooks) run one event after another, keeping the order. The
          // initial objects are already in memory: only later events count against the bound.
          if (established && !initial && queued >= MAX_QUEUED_CONVERSIONS) return false;
          queued++;
          const prepare = endpoint.prepare;
          chain = chain.then(async () => {
            try {
              if (converted) {
                await prepare(event.prevObject ? [event.object, event.prevObject] : [event.object]);
                const chosen = filteredEventType(event, converted);
                if (chosen === 'DELETED' && event.type !== 'DELETED') {
                  // Out of the selector: the object as the watcher knew it, converted too.
                  const view = endpoint.store.cache.deletedView(event);
                  await prepare([view.object]);
                  if (!res.destroyed && !res.writableEnded) writeEvent('DELETED', view);
                } else if (chosen && !res.destroyed && !res.writableEnded) writeEvent(chosen, event);
              } else {
                await prepare([event.object]);
                if (!res.destroyed && !res.writableEnded) writeEvent(type, event);
              }
            } catch (err) {
              if (!res.writableEnded) writeStatusEvent(err);
              watcher?.close();
            } finally {
              queued--;
            }
          });
          return true;
        },
        waitForRoom() {
          if (res.destroyed || res.writableEnded || res.writableLength < INITIAL_EVENTS_BUFFERED_BYTES) return undefined;
          return new Promise<void>((resolve) => res.once('drain', (wakeRoom = resolve)));
        },
        onBookmark(revision: number, initialEventsEnd?: boolean) {
          if (res.destroyed || res.writableEnded) return false;
          const metadata: Record<string, unknown> = { resourceVersion: String(revision), creationTimestamp: null };
          if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
          const bookmark = { kind: endpoint.names.kind, apiVersion, metadata };
          const send = () => write(frame('BOOKMARK', encoder.bookmark(bookmark)));
          // After the events still being converted, never before them.
          if (queued > 0) chain = chain.then(() => (res.destroyed || res.writableEnded ? undefined : send()));
          else send();
          return true;
        },
        onClose(err?: Error) {
          if (err && !(err instanceof SlowWatcherError) && !res.writableEnded) {
            writeStatusEvent(err);
          }
          finish();
        },
      },
    );
    established = true;
    // A client that went away while the watch was being set up (its close event came before the listeners below) holds nothing.
    if (res.destroyed || res.writableEnded) {
      watcher.close();
      return;
    }
  } catch (err) {
    const status = statusOf(err);
    if (status.code !== 410) throw err;
    writeStatusEvent(status);
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
  // Followed by a reaction rather than this frame suspended for as long as the watch is open.
  return finished.then(() => {
    clearTimeout(timer);
    req.off('close', onGone);
  });
}

