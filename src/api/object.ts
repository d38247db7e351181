/** Objects as kapi handles them: the JSON of a Kubernetes object. */

/** A Kubernetes object as JSON. Cached objects are shared: never mutate one in place. */
export type KObject = Record<string, any>;
