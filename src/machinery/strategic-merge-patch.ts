/**
 * Strategic merge patch for built-in resources, without Go type metadata: a
 * JSON merge patch that also honors the directives kubectl sends. Lists named in
 * `$setElementOrder/<field>` are merged by the key those entries use (the
 * field's patchMergeKey), or as sets of primitives, and take that order;
 * `$patch: delete|replace`, `$retainKeys` and `$deleteFromPrimitiveList/<field>`
 * are applied. Lists without a directive are replaced, as in a merge patch.
 */
type Json = unknown;
type Obj = Record<string, Json>;

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return patch;
  if (patch.$patch === 'delete') return undefined;
  const base: Obj = patch.$patch === 'replace' || !isObj(target) ? {} : { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) {
      delete base[key];
      continue;
    }
    const order = patch[`$setElementOrder/${key}`];
    if (Array.isArray(order) || (Array.isArray(value) && Array.isArray(base[key]) && (value as Json[]).some((v) => isObj(v) && '$patch' in v))) {
      base[key] = mergeList(Array.isArray(base[key]) ? (base[key] as Json[]) : [], value as Json[], Array.isArray(order) ? order : undefined);
    } else if (isObj(value)) {
      const merged = applyStrategicMergePatch(base[key], value);
      if (merged === undefined) delete base[key];
      else base[key] = merged;
    } else {
      base[key] = value;
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$setElementOrder/')) {
      const field = key.slice('$setElementOrder/'.length);
      if (!(field in patch) && Array.isArray(base[field])) base[field] = mergeList(base[field] as Json[], [], value as Json[]);
    }
    if (key.startsWith('$deleteFromPrimitiveList/') && Array.isArray(value)) {
      const field = key.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(base[field])) base[field] = (base[field] as Json[]).filter((v) => !value.some((d) => d === v));
    }
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys as string[]);
    for (const k of Object.keys(base)) if (!keep.has(k)) delete base[k];
  }
  return base;
}

/** Merge a list by its merge key (from the order directive or the patch's elements), or as a set of primitives. */
function mergeList(live: Json[], patch: Json[], order: Json[] | undefined): Json[] {
  const sample = [...(order ?? []), ...patch].find(isObj);
  const mergeKey = sample ? Object.keys(sample).find((k) => !k.startsWith('$')) : undefined;
  if (!mergeKey) {
    const out = [...live];
    for (const v of patch) if (!out.some((x) => x === v)) out.push(v);
    return order ? sortBy(out, order, (v) => v) : out;
  }
  const keyOf = (v: Json) => (isObj(v) ? JSON.stringify(v[mergeKey]) : undefined);
  const out = [...live];
  for (const p of patch) {
    if (!isObj(p)) continue;
    const i = out.findIndex((x) => keyOf(x) === keyOf(p));
    if (p.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = applyStrategicMergePatch(out[i], p);
    } else {
      out.push(applyStrategicMergePatch({}, p));
    }
  }
  return order ? sortBy(out, order, keyOf) : out;
}

/** Elements named in `order` first, in that order; the rest after, as they were. */
function sortBy(items: Json[], order: Json[], key: (v: Json) => unknown): Json[] {
  const rank = new Map(order.map((o, i) => [isObj(o) ? key(o) : o, i]));
  const ranked = items.filter((v) => rank.has(key(v))).sort((a, b) => rank.get(key(a))! - rank.get(key(b))!);
  return [...ranked, ...items.filter((v) => !rank.has(key(v)))];
}
