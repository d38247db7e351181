/**
 * The query and path parameters of resource operations, with the texts
 * kube-apiserver publishes (the option structs' field documentation), and the
 * per-verb parameter sets the CRD OpenAPI builder attaches (GetOptions,
 * ListOptions, CreateOptions, UpdateOptions, PatchOptions, DeleteOptions).
 */

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'body';
  description: string;
  type?: 'string' | 'integer' | 'boolean';
  required?: boolean;
  /** For body parameters: the definition the body is read as. */
  schemaRef?: string;
}

const TEXT = {
  allowWatchBookmarks: "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.",
  continue: "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.",
  fieldSelector: "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
  labelSelector: "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
  limit: "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned.",
  resourceVersion: "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
  resourceVersionMatch: "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
  timeoutSeconds: "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
  watch: "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
  dryRun: "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
  fieldManager: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.",
  fieldManagerPatch: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).",
  fieldValidation: "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
  force: "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.",
  gracePeriodSeconds: "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.",
  orphanDependents: "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.",
  propagationPolicy: "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
  pretty: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
  namespace: 'object name and auth scope, such as for teams and projects',
};

const q = (name: string, type: Parameter['type'], description: string): Parameter => ({ name, in: 'query', description, type });

export const PRETTY = q('pretty', 'string', TEXT.pretty);
export const NAMESPACE: Parameter = { name: 'namespace', in: 'path', description: TEXT.namespace, type: 'string', required: true };
export const nameParameter = (kind: string): Parameter => ({ name: 'name', in: 'path', description: `name of the ${kind}`, type: 'string', required: true });

const RESOURCE_VERSION = q('resourceVersion', 'string', TEXT.resourceVersion);
const DRY_RUN = q('dryRun', 'string', TEXT.dryRun);
const FIELD_VALIDATION = q('fieldValidation', 'string', TEXT.fieldValidation);

const LIST = [
  q('allowWatchBookmarks', 'boolean', TEXT.allowWatchBookmarks),
  q('continue', 'string', TEXT.continue),
  q('fieldSelector', 'string', TEXT.fieldSelector),
  q('labelSelector', 'string', TEXT.labelSelector),
  q('limit', 'integer', TEXT.limit),
  RESOURCE_VERSION,
  q('resourceVersionMatch', 'string', TEXT.resourceVersionMatch),
  q('timeoutSeconds', 'integer', TEXT.timeoutSeconds),
  q('watch', 'boolean', TEXT.watch),
];

const DELETE = [
  DRY_RUN,
  q('gracePeriodSeconds', 'integer', TEXT.gracePeriodSeconds),
  q('orphanDependents', 'boolean', TEXT.orphanDependents),
  q('propagationPolicy', 'string', TEXT.propagationPolicy),
];
const FIELD_MANAGER = q('fieldManager', 'string', TEXT.fieldManager);
const FIELD_MANAGER_PATCH = q('fieldManager', 'string', TEXT.fieldManagerPatch);
const FORCE = q('force', 'boolean', TEXT.force);
const WRITE = [DRY_RUN, FIELD_MANAGER];
const WRITE_FV = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
const PATCH = [DRY_RUN, FIELD_MANAGER_PATCH, FORCE];
const PATCH_FV = [DRY_RUN, FIELD_MANAGER_PATCH, FIELD_VALIDATION, FORCE];
const GET = [RESOURCE_VERSION];

/**
 * The query parameters of an action (the builder's AddObjectParams of its options struct).
 * The same objects come back on every call, so callers may cache by identity.
 */
export function actionParameters(action: string, fieldValidation: boolean): readonly Parameter[] {
  switch (action) {
    case 'get':
      return GET;
    case 'list':
    case 'deletecollection':
      return LIST;
    case 'post':
    case 'put':
      return fieldValidation ? WRITE_FV : WRITE;
    case 'patch':
      return fieldValidation ? PATCH_FV : PATCH;
    case 'delete':
      return DELETE;
  }
  return [];
}

/** Every parameter that may be shared between resources, so the shared set is known up front. */
export function shareableParameters(fieldValidation: boolean): Parameter[] {
  const out = [PRETTY, NAMESPACE];
  for (const action of ['get', 'list', 'post', 'put', 'patch', 'delete']) out.push(...actionParameters(action, fieldValidation));
  out.push(
    { name: 'body', in: 'body', description: '', required: false, schemaRef: 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' },
    { name: 'body', in: 'body', description: '', required: true, schemaRef: 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
  );
  return out;
}
