/**
 * The subset of etcd's v3 API that the etcd backend speaks: KV (Range, Txn,
 * Compact), Watch, Maintenance.Status (the server version), and Lease's grant
 * and revoke for TTL keys later. Field numbers and names are those of etcd's
 * api/etcdserverpb/rpc.proto and api/mvccpb/kv.proto; fields kapi never sets
 * or reads are left out (protobuf skips unknown fields).
 *
 * The descriptor is protobufjs' JSON form of those .proto files, kept in code
 * so the compiled module needs no file beside it at run time.
 */
import { fromJSON, type MethodDefinition } from '@grpc/proto-loader';

const f = (type: string, id: number): { type: string; id: number } => ({ type, id });
const repeated = (type: string, id: number) => ({ type, id, rule: 'repeated' as const });
const header = { header: f('ResponseHeader', 1) };

const mvccpb = {
  nested: {
    KeyValue: {
      fields: {
        key: f('bytes', 1),
        create_revision: f('int64', 2),
        mod_revision: f('int64', 3),
        version: f('int64', 4),
        value: f('bytes', 5),
      },
    },
    Event: {
      fields: { type: f('EventType', 1), kv: f('KeyValue', 2), prev_kv: f('KeyValue', 3) },
      nested: { EventType: { values: { PUT: 0, DELETE: 1 } } },
    },
  },
};

const etcdserverpb = {
  nested: {
    KV: {
      methods: {
        Range: { requestType: 'RangeRequest', responseType: 'RangeResponse' },
        Txn: { requestType: 'TxnRequest', responseType: 'TxnResponse' },
        Compact: { requestType: 'CompactionRequest', responseType: 'CompactionResponse' },
      },
    },
    Watch: {
      methods: {
        Watch: { requestType: 'WatchRequest', requestStream: true, responseType: 'WatchResponse', responseStream: true },
      },
    },
    Lease: {
      methods: {
        LeaseGrant: { requestType: 'LeaseGrantRequest', responseType: 'LeaseGrantResponse' },
        LeaseRevoke: { requestType: 'LeaseRevokeRequest', responseType: 'LeaseRevokeResponse' },
      },
    },
    Maintenance: {
      methods: { Status: { requestType: 'StatusRequest', responseType: 'StatusResponse' } },
    },
    ResponseHeader: {
      fields: { cluster_id: f('uint64', 1), member_id: f('uint64', 2), revision: f('int64', 3), raft_term: f('uint64', 4) },
    },
    RangeRequest: {
      fields: {
        key: f('bytes', 1),
        range_end: f('bytes', 2),
        limit: f('int64', 3),
        revision: f('int64', 4),
        keys_only: f('bool', 8),
        count_only: f('bool', 9),
      },
    },
    RangeResponse: {
      fields: { ...header, kvs: repeated('.mvccpb.KeyValue', 2), more: f('bool', 3), count: f('int64', 4) },
    },
    PutRequest: { fields: { key: f('bytes', 1), value: f('bytes', 2), prev_kv: f('bool', 4) } },
    PutResponse: { fields: { ...header, prev_kv: f('.mvccpb.KeyValue', 2) } },
    DeleteRangeRequest: { fields: { key: f('bytes', 1), range_end: f('bytes', 2), prev_kv: f('bool', 3) } },
    DeleteRangeResponse: {
      fields: { ...header, deleted: f('int64', 2), prev_kvs: repeated('.mvccpb.KeyValue', 3) },
    },
    RequestOp: {
      oneofs: { request: { oneof: ['request_range', 'request_put', 'request_delete_range'] } },
      fields: {
        request_range: f('RangeRequest', 1),
        request_put: f('PutRequest', 2),
        request_delete_range: f('DeleteRangeRequest', 3),
      },
    },
    ResponseOp: {
      oneofs: { response: { oneof: ['response_range', 'response_put', 'response_delete_range'] } },
      fields: {
        response_range: f('RangeResponse', 1),
        response_put: f('PutResponse', 2),
        response_delete_range: f('DeleteRangeResponse', 3),
      },
    },
    Compare: {
      oneofs: { target_union: { oneof: ['version', 'create_revision', 'mod_revision'] } },
      fields: {
        result: f('CompareResult', 1),
        target: f('CompareTarget', 2),
        key: f('bytes', 3),
        version: f('int64', 4),
        create_revision: f('int64', 5),
        mod_revision: f('int64', 6),
      },
      nested: {
        CompareResult: { values: { EQUAL: 0, GREATER: 1, LESS: 2, NOT_EQUAL: 3 } },
        CompareTarget: { values: { VERSION: 0, CREATE: 1, MOD: 2, VALUE: 3, LEASE: 4 } },
      },
    },
    TxnRequest: {
      fields: { compare: repeated('Compare', 1), success: repeated('RequestOp', 2), failure: repeated('RequestOp', 3) },
    },
    TxnResponse: { fields: { ...header, succeeded: f('bool', 2), responses: repeated('ResponseOp', 3) } },
    CompactionRequest: { fields: { revision: f('int64', 1), physical: f('bool', 2) } },
    CompactionResponse: { fields: { ...header } },
    WatchRequest: {
      oneofs: { request_union: { oneof: ['create_request', 'cancel_request', 'progress_request'] } },
      fields: {
        create_request: f('WatchCreateRequest', 1),
        cancel_request: f('WatchCancelRequest', 2),
        progress_request: f('WatchProgressRequest', 3),
      },
    },
    WatchCreateRequest: {
      fields: {
        key: f('bytes', 1),
        range_end: f('bytes', 2),
        start_revision: f('int64', 3),
        progress_notify: f('bool', 4),
        prev_kv: f('bool', 6),
        fragment: f('bool', 8),
      },
    },
    WatchCancelRequest: { fields: { watch_id: f('int64', 1) } },
    WatchProgressRequest: { fields: {} },
    WatchResponse: {
      fields: {
        ...header,
        watch_id: f('int64', 2),
        created: f('bool', 3),
        canceled: f('bool', 4),
        compact_revision: f('int64', 5),
        cancel_reason: f('string', 6),
        fragment: f('bool', 7),
        events: repeated('.mvccpb.Event', 11),
      },
    },
    LeaseGrantRequest: { fields: { TTL: f('int64', 1), ID: f('int64', 2) } },
    LeaseGrantResponse: { fields: { ...header, ID: f('int64', 2), TTL: f('int64', 3), error: f('string', 4) } },
    LeaseRevokeRequest: { fields: { ID: f('int64', 1) } },
    LeaseRevokeResponse: { fields: { ...header } },
    StatusRequest: { fields: {} },
    StatusResponse: { fields: { ...header, version: f('string', 2), leader: f('uint64', 4) } },
  },
};

// ---------------------------------------------------------------------------
// The messages as the loader hands them over (keepCase, longs as numbers:
// revisions stay far below 2^53; bytes as Buffers; defaults filled in).

export interface PbKeyValue {
  key: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  value: Buffer;
}

export interface PbHeader {
  cluster_id: number;
  member_id: number;
  revision: number;
  raft_term: number;
}

export interface PbRangeRequest {
  key: Buffer;
  range_end?: Buffer;
  limit?: number;
  revision?: number;
  keys_only?: boolean;
  count_only?: boolean;
}

export interface PbRangeResponse {
  header: PbHeader;
  kvs: PbKeyValue[];
  more: boolean;
  count: number;
}

export interface PbPutRequest {
  key: Buffer;
  value: Buffer;
  prev_kv?: boolean;
}

export interface PbDeleteRangeRequest {
  key: Buffer;
  range_end?: Buffer;
  prev_kv?: boolean;
}

export type PbRequestOp =
  | { request_range: PbRangeRequest }
  | { request_put: PbPutRequest }
  | { request_delete_range: PbDeleteRangeRequest };

export interface PbResponseOp {
  response?: 'response_range' | 'response_put' | 'response_delete_range';
  response_range?: PbRangeResponse;
  response_put?: { header: PbHeader; prev_kv?: PbKeyValue | null };
  response_delete_range?: { header: PbHeader; deleted: number; prev_kvs: PbKeyValue[] };
}

export interface PbCompare {
  result: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
  target: 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
  key: Buffer;
  version?: number;
  create_revision?: number;
  mod_revision?: number;
}

export interface PbTxnRequest {
  compare: PbCompare[];
  success: PbRequestOp[];
  failure: PbRequestOp[];
}

export interface PbTxnResponse {
  header: PbHeader;
  succeeded: boolean;
  responses: PbResponseOp[];
}

export interface PbCompactionRequest {
  revision: number;
  physical?: boolean;
}

export interface PbWatchCreateRequest {
  key: Buffer;
  range_end: Buffer;
  start_revision: number;
  progress_notify?: boolean;
  prev_kv?: boolean;
  fragment?: boolean;
}

export type PbWatchRequest =
  | { create_request: PbWatchCreateRequest }
  | { cancel_request: { watch_id: number } }
  | { progress_request: Record<string, never> };

export interface PbEvent {
  type: 'PUT' | 'DELETE';
  kv: PbKeyValue;
  prev_kv?: PbKeyValue | null;
}

export interface PbWatchResponse {
  header: PbHeader;
  watch_id: number;
  created: boolean;
  canceled: boolean;
  compact_revision: number;
  cancel_reason: string;
  fragment: boolean;
  events: PbEvent[];
}

export interface PbStatusResponse {
  header: PbHeader;
  version: string;
  leader: number;
}

// ---------------------------------------------------------------------------

// The literals above are checked by protobufjs when loaded; its JSON typings are too strict a union to follow.
const definition = fromJSON(
  { nested: { mvccpb, etcdserverpb } } as unknown as Parameters<typeof fromJSON>[0],
  { keepCase: true, longs: Number, enums: String, bytes: Buffer, defaults: true, oneofs: true },
);

function method<Req, Res>(service: string, name: string): MethodDefinition<Req, Res> {
  const svc = definition[`etcdserverpb.${service}`] as unknown as Record<string, MethodDefinition<Req, Res>> | undefined;
  const m = svc?.[name];
  if (!m) throw new Error(`etcd proto: no method ${service}.${name}`);
  return m;
}

/** The etcd methods the backend calls, with their paths and (de)serializers. */
export const methods = {
  range: method<PbRangeRequest, PbRangeResponse>('KV', 'Range'),
  txn: method<PbTxnRequest, PbTxnResponse>('KV', 'Txn'),
  compact: method<PbCompactionRequest, { header: PbHeader }>('KV', 'Compact'),
  watch: method<PbWatchRequest, PbWatchResponse>('Watch', 'Watch'),
  status: method<Record<string, never>, PbStatusResponse>('Maintenance', 'Status'),
  leaseGrant: method<{ TTL: number; ID?: number }, { header: PbHeader; ID: number; TTL: number; error: string }>('Lease', 'LeaseGrant'),
  leaseRevoke: method<{ ID: number }, { header: PbHeader }>('Lease', 'LeaseRevoke'),
};

export type UnaryMethod<Req, Res> = MethodDefinition<Req, Res>;
