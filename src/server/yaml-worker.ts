/**
 * The YAML thread: parses large YAML request bodies and writes large YAML
 * answers, so that a body of a few megabytes (seconds of parsing) or an answer
 * of tens of megabytes does not stall every other client.
 *
 * A body comes as its text and goes back as the value's JSON text (or the YAML
 * error, or encoding/json's error for a value nested deeper than the apiserver
 * decodes); an answer comes as the value's JSON text and goes back as the YAML
 * document's bytes (moved, not copied).
 */
import { parentPort } from 'node:worker_threads';
import { goMarshalJson, JsonSyntaxError, MAX_JSON_DEPTH, nestsDeeperThan, parseJson, parsesNatively, parseStoredJson, stringifyJson } from '../machinery/json.js';
import { parseYaml, YamlSyntaxError } from '../machinery/yaml.js';
import { encodeYaml } from '../machinery/yaml-emit.js';

export type YamlRequest = { id: number; text: string } | { id: number; encode: string };

export type YamlReply =
  /** A parsed body as JSON; `native`: JSON.parse reads it as encoding/json does. */
  | { id: number; json: string; native: boolean }
  | { id: number; syntaxError: string; line?: number }
  | { id: number; jsonError: string; offset: number }
  | { id: number; yaml: Uint8Array }
  | { id: number; failure: string; name?: string };

function parsed(id: number, text: string): YamlReply {
  const value = parseYaml(text) ?? null;
  // Each level takes a character of the text at least: only a long text can nest that deep.
  // The error names the first bracket too deep in the JSON go-yaml's value marshals to (keys sorted).
  if (text.length > MAX_JSON_DEPTH && nestsDeeperThan(value, MAX_JSON_DEPTH)) parseJson(goMarshalJson(value)); // throws JsonSyntaxError
  const json = stringifyJson(value);
  return { id, json, native: parsesNatively(json) };
}

function answer(request: YamlRequest): { reply: YamlReply; transfer: ArrayBuffer[] } {
  const { id } = request;
  try {
    if ('text' in request) return { reply: parsed(id, request.text), transfer: [] };
    const bytes = encodeYaml(parseStoredJson(request.encode));
    // The bytes' memory moves to the other thread, unless it is Buffer's shared pool (small documents) or mostly
    // spare room (the emitter's buffer grows by doubling): then a copy of just the document does.
    const owned = bytes.byteLength >= Buffer.poolSize && bytes.byteLength * 4 >= bytes.buffer.byteLength * 3;
    const yaml = owned ? bytes : new Uint8Array(bytes);
    return { reply: { id, yaml }, transfer: [yaml.buffer as ArrayBuffer] };
  } catch (err) {
    if (err instanceof YamlSyntaxError) return { reply: { id, syntaxError: err.message, line: err.line }, transfer: [] };
    if (err instanceof JsonSyntaxError) return { reply: { id, jsonError: err.message, offset: err.offset }, transfer: [] };
    const e = err as Error;
    return { reply: { id, failure: e?.message ?? String(err), name: e?.name }, transfer: [] };
  }
}

parentPort?.on('message', (request: YamlRequest) => {
  const { reply, transfer } = answer(request);
  parentPort!.postMessage(reply, transfer);
});
