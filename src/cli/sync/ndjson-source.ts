import type { Readable } from 'node:stream';
import { jsonFaultOf } from '../../internal/endpoint/json-fault';
import { withRaw } from './raw-record';
import { SourceError } from './source-error';

/** The longest NDJSON line read: a record is far smaller, and memory must stay bounded. */
const MAX_LINE = 64 * 1024 * 1024;

/**
 * The records of an NDJSON stream, one JSON object a line, as they are (the engine's records:
 * `{ key, data, accountKey?, contactKey?, opportunityKey? }`): the engine checks their fields.
 * Blank lines are skipped; a byte order mark and CRLF line ends are taken. A line that is not a
 * JSON object is a {@link SourceError} with its line and column, and never its text.
 */
export async function* ndjsonRecords(input: Readable, file: string): AsyncGenerator<Record<string, unknown>> {
  input.setEncoding('utf8');
  let rest = '';
  let line = 0;
  for await (const chunk of input as AsyncIterable<string>) {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl !== -1; nl = chunk.indexOf('\n', start)) {
      const text = rest + chunk.slice(start, nl);
      rest = '';
      start = nl + 1;
      line++;
      const record = recordOf(text, file, line);
      if (record) yield record;
    }
    rest += chunk.slice(start);
    if (rest.length > MAX_LINE)
      throw new SourceError(file, line + 1, undefined, `a line longer than ${MAX_LINE} characters`);
  }
  if (rest) {
    const record = recordOf(rest, file, line + 1);
    if (record) yield record;
  }
}

function recordOf(raw: string, file: string, line: number): Record<string, unknown> | undefined {
  const text = (line === 1 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '');
  if (!text.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which may be long or private: where, not what.
    throw new SourceError(file, line, jsonFaultOf(text)?.column, 'not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SourceError(file, line, 1, 'not a JSON object ({ "key": ..., "data": { ... } })');
  }
  return withRaw(value as Record<string, unknown>, { text, header: undefined });
}
