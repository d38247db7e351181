/** A built-in object read as kube-apiserver's decoder reads it into its Go struct, and written back as encoding/json writes it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkTypedObject } from '../../src/schema/builtin/typed-json.js';

test('leaves out what encoding/json omits: empty omitempty maps, lists and strings, false and zero, nil pointers', () => {
  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', namespace: '', labels: {}, annotations: {}, finalizers: [], generation: 0, creationTimestamp: null, ownerReferences: null },
    data: {},
    immutable: null,
  };
  const checked = checkTypedObject('core/v1.ConfigMap', cm);
  assert.deepEqual(checked, { error: undefined, unknown: [] });
  // creationTimestamp is a struct (metav1.Time): never empty, and its zero is written as null.
  assert.deepEqual(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', creationTimestamp: null } });

  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { app: 'd' } },
    spec: {
      replicas: 0,
      paused: false,
      minReadySeconds: 0,
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx', args: [], env: [], ports: [] }], volumes: [] } },
    },
  };
  checkTypedObject('apps/v1.Deployment', deployment);
  // replicas is a pointer: 0 is a value. containers has no omitempty.
  assert.deepEqual(deployment.spec, {
    replicas: 0,
    selector: { matchLabels: { app: 'd' } },
    template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  });
});

test('keeps the values of fields without omitempty, and reports the decoder\'s error as before', () => {
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [] } };
  checkTypedObject('core/v1.Pod', pod);
  assert.deepEqual(pod.spec, { containers: [] });
  const bad = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: [] } };
  assert.match(checkTypedObject('core/v1.ConfigMap', bad).error ?? '', /cannot unmarshal array into Go struct field ObjectMeta\.metadata\.labels of type map\[string\]string/);
});
