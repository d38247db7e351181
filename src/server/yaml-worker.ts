/**
 * The thread that parses large YAML request bodies, so that a body of a few
 * megabytes (seconds of parsing) does not stall every other client: it gets a
 * text and answers with the value as JSON text, or with the YAML error.
 */
import { parentPort } from 'node:worker_threads';
import { stringifyJson } from '../machinery/json.js';
import { parseYaml, YamlSyntaxError } from '../machinery/yaml.js';

export interface YamlRequest {
  id: number;
  text: string;
}

export type YamlReply = { id: number; json: string } | { id: number; syntaxError: string; line?: number } | { id: number; failure: string };

parentPort?.on('message', ({ id, text }: YamlRequest) => {
  let reply: YamlReply;
  try {
    reply = { id, json: stringifyJson(parseYaml(text) ?? null) };
  } catch (err) {
    reply = err instanceof YamlSyntaxError ? { id, syntaxError: err.message, line: err.line } : { id, failure: (err as Error).message ?? String(err) };
  }
  parentPort!.postMessage(reply);
});
