/**
 * JSONPath as CRD printer columns use it (apiextensions-apiserver's
 * tableconvertor): a column path such as `.spec.replicas` is parsed as the
 * template `{.spec.replicas}` with missing keys allowed, and only the first
 * value found is shown; a path that fails at run time gives no value, never an
 * error.
 */
import { JsonPath, JsonPathSyntaxError } from './jsonpath.js';

/** The template for a printer column path; throws JsonPathSyntaxError when it does not parse. */
export function compileColumnPath(path: string, name = path): JsonPath {
  return new JsonPath(name).parse(`{${path}}`).allowMissingKeys(true);
}

/**
 * client-go's parse error for a printer column's JSONPath, or undefined when it
 * parses: what CRD validation reports for `additionalPrinterColumns[i].jsonPath`.
 */
export function validatePrinterColumnJSONPath(path: string): string | undefined {
  try {
    compileColumnPath(path);
    return undefined;
  } catch (e) {
    if (e instanceof JsonPathSyntaxError) return e.message;
    throw e;
  }
}

/** The first value the column's path finds in obj, or `found: false` when there is none or evaluation fails. */
export function findColumnValue(path: JsonPath, obj: unknown): { found: true; value: unknown } | { found: false } {
  let results: unknown[][];
  try {
    results = path.findResults(obj);
  } catch {
    return { found: false };
  }
  if (results.length === 0 || results[0].length === 0) return { found: false };
  return { found: true, value: results[0][0] };
}

/**
 * A string column's text for a found value: PrintResults of that one value, where
 * a JSON null prints as `<no value>` (the tableconvertor re-wraps the bare value).
 */
export function columnText(path: JsonPath, value: unknown): string {
  if (value === null || value === undefined) return '<no value>';
  return path.printResults([value]);
}
