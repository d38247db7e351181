/**
 * What the signed-in user may do in a namespace, as the API server says it (a SelfSubjectRulesReview): the rules
 * for resources and for non-resource URLs, and whether the list is complete (an authorizer that cannot list its
 * rules, such as a webhook, leaves it incomplete: the console then still asks about each action on its own).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, request, type Obj } from './api.js';
import { href } from './route.js';
import { ErrorNote, Grid } from './parts.js';

interface Review {
  resourceRules: Obj[];
  nonResourceRules: Obj[];
  incomplete: boolean;
  evaluationError?: string;
}

async function review(namespace: string): Promise<Review> {
  const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } };
  const r = await request('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { body: JSON.stringify(body), contentType: 'application/json' });
  const status = (r.json.status ?? {}) as Obj;
  return { resourceRules: status.resourceRules ?? [], nonResourceRules: status.nonResourceRules ?? [], incomplete: status.incomplete === true, evaluationError: status.evaluationError };
}

const list = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v.join(', ') : '');
const groupNames = (v: unknown) => (Array.isArray(v) ? v.map((g) => (g === '' ? 'core' : String(g))).join(', ') : '');

export function RightsPage({ namespace }: { namespace: string }) {
  const [ns, setNs] = useState(namespace);
  const [rules, setRules] = useState<Review | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    setRules(undefined);
    setError(undefined);
    review(namespace).then(setRules, (e: ApiError) => setError(e));
  }, [namespace]);
  const submit = (e: Event) => {
    e.preventDefault();
    location.hash = href('rights', undefined, undefined, undefined, { ns: ns.trim() });
  };
  return (
    <>
      <h1>Your rights</h1>
      <form class="filters" onSubmit={submit}>
        <label>
          Namespace <input value={ns} onInput={(e) => setNs((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Show</button>
      </form>
      {error && <ErrorNote error={error} />}
      {!rules && !error && <p class="loading">Asking the API server…</p>}
      {rules && (
        <>
          {rules.incomplete && (
            <p role="note" class="hint">
              This list may be incomplete{rules.evaluationError ? ` (${rules.evaluationError})` : ''}: an action not listed may still be allowed, and the console asks about each one before it offers it.
            </p>
          )}
          <section aria-labelledby="resource-rules">
            <h2 id="resource-rules">Resources in {namespace || 'every namespace'}</h2>
            <Grid wrap head={['Verbs', 'API groups', 'Resources', 'Names']} rows={rules.resourceRules.map((r) => [list(r.verbs), groupNames(r.apiGroups), list(r.resources), list(r.resourceNames) || 'any'])} />
          </section>
          <section aria-labelledby="url-rules">
            <h2 id="url-rules">Other URLs</h2>
            <Grid wrap head={['Verbs', 'URLs']} rows={rules.nonResourceRules.map((r) => [list(r.verbs), list(r.nonResourceURLs)])} />
          </section>
        </>
      )}
    </>
  );
}
