/** Objects as kapi handles them: the JSON of a Kubernetes object. */

/**
 * A Kubernetes object as JSON, of any kind. Cached objects are shared: never mutate one in place. Its members
 * are `any` on purpose: it is the JSON of every kind, read where its kind is known (the built-in kinds'
 * typed forms are in api/kinds, a defined resource's in its schema); the one `any` kapi declares.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type KObject = Record<string, any>;
