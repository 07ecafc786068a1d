import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Delimiter, Encoding } from './mapping/schema';
import { SourceError, unreadable } from './source-error';

/** How a CSV source's bytes are text: what a writer of rows "in the source's own format" needs too. */
export interface TextFormat {
  /** The encoding read (and the one to write rows back in). */
  readonly encoding: Encoding;
  /** Whether the file starts with a byte order mark (to write one back). */
  readonly bom: boolean;
  /** The field separator: `,`, `;` or a tab character. */
  readonly delimiter: ',' | ';' | '\t';
  /** The header line's end, which rows written back end with. */
  readonly lineEnd: '\r\n' | '\n';
}

/** First bytes of files that are not text: refused as what they are, not as a bad row. */
const MAGIC: readonly (readonly [string, readonly number[]])[] = [
  ['gzip', [0x1f, 0x8b]],
  ['zip: an .xlsx or .zip file; export CSV', [0x50, 0x4b, 0x03, 0x04]],
  ['zip: an .xlsx or .zip file; export CSV', [0x50, 0x4b, 0x05, 0x06]],
  ['bzip2', [0x42, 0x5a, 0x68]],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
  ['7z', [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]],
  ['an old Excel .xls file; export CSV', [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]],
  ['PDF', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['PNG', [0x89, 0x50, 0x4e, 0x47]],
  ['SQLite', [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66]],
];

const startsWith = (head: Uint8Array, magic: readonly number[]) => magic.every((byte, i) => head[i] === byte);

/** What the first bytes say is not text, or undefined. */
function notText(head: Uint8Array, encoding: Encoding | undefined): string | undefined {
  for (const [what, magic] of MAGIC) if (startsWith(head, magic)) return what;
  const utf16 = encoding === 'utf-16le' || startsWith(head, [0xff, 0xfe]);
  if (!utf16 && head.includes(0)) return 'binary: it holds NUL bytes';
  return undefined;
}

/** The separator the header line uses most, outside quotes: `,` when it holds none. */
function delimiterOf(headerLine: string): ',' | ';' | '\t' {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const char of headerLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === ',' || char === ';' || char === '\t')) counts[char]++;
  }
  const best = (['\t', ';', ','] as const).reduce((a, b) => (counts[b] > counts[a] ? b : a), ',' as const);
  return counts[best] > 0 ? best : ',';
}

const HEAD = 64 * 1024;

/**
 * A source's text format, from its first 64 KiB: a byte order mark decides the encoding, else the
 * one given, else UTF-8 (or windows-1252, said on stderr, when the head is not UTF-8); the
 * separator given, else the one the header line uses. A binary or compressed file is refused.
 */
export async function textFormatOf(
  path: string,
  file: string,
  given: { readonly delimiter: Delimiter | undefined; readonly encoding: Encoding | undefined },
  warn: (line: string) => void,
): Promise<TextFormat> {
  const head = await headOf(path, file);
  const what = notText(head, given.encoding);
  if (what) throw new SourceError(file, undefined, undefined, `this is not a text file (${what})`);
  let encoding = given.encoding ?? 'utf-8';
  let bom = false;
  if (startsWith(head, [0xef, 0xbb, 0xbf])) [encoding, bom] = ['utf-8', true];
  else if (startsWith(head, [0xff, 0xfe])) [encoding, bom] = ['utf-16le', true];
  else if (startsWith(head, [0xfe, 0xff]))
    throw new SourceError(file, undefined, undefined, 'UTF-16 big-endian is not read: save it as UTF-8');
  else if (given.encoding === undefined && !isUtf8(head)) {
    encoding = 'windows-1252';
    warn(`crm: ${file} is not UTF-8: read as windows-1252 (give --encoding to say which)`);
  }
  const text = decoderOf(encoding).decode(head, { stream: true });
  const firstLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const lineEnd = text.includes(`${firstLine}\r\n`) ? '\r\n' : '\n';
  const delimiter =
    given.delimiter === undefined ? delimiterOf(firstLine) : given.delimiter === 'tab' ? '\t' : given.delimiter;
  return { encoding, bom, delimiter, lineEnd };
}

/** Whether `head` is UTF-8, a character cut at its end allowed. */
function isUtf8(head: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

async function headOf(path: string, file: string): Promise<Uint8Array> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD), 0, HEAD, 0);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    throw unreadable(file, error);
  } finally {
    await handle?.close();
  }
}

/** A streaming decoder: UTF-8 refuses a malformed byte rather than write U+FFFD into the CRM. */
function decoderOf(encoding: Encoding): { decode(bytes: Uint8Array, options?: { stream: boolean }): string } {
  // WHATWG's "latin1" is windows-1252; ISO-8859-1 proper is Node's 'latin1' (one byte, one character).
  if (encoding === 'latin1') return { decode: (bytes) => Buffer.from(bytes).toString('latin1') };
  return new TextDecoder(encoding, { fatal: encoding === 'utf-8' });
}

/** `input`'s bytes as text in `format.encoding`, a chunk at a time (the byte order mark dropped). */
export function decodedStream(input: Readable, format: TextFormat, file: string): Readable {
  const decoder = decoderOf(format.encoding);
  async function* chunks() {
    try {
      for await (const chunk of input as AsyncIterable<Buffer>) yield decoder.decode(chunk, { stream: true });
      const last = decoder.decode(new Uint8Array(0));
      if (last) yield last;
    } catch (error) {
      if (error instanceof TypeError && format.encoding === 'utf-8') {
        throw new SourceError(file, undefined, undefined, 'not valid UTF-8: give --encoding windows-1252 (or latin1)');
      }
      throw error;
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

let windows1252: Map<string, number> | undefined;

/**
 * `text` as bytes of `encoding`, for writing rows back in a source's own format (`--failed`): a
 * character the encoding lacks is written as `?`.
 */
export function encodeText(text: string, encoding: Encoding): Buffer {
  if (encoding === 'utf-8') return Buffer.from(text, 'utf8');
  if (encoding === 'utf-16le') return Buffer.from(text, 'utf16le');
  if (encoding === 'latin1')
    return Buffer.from(
      Array.from(text, (char) => (char.charCodeAt(0) <= 0xff && char.length === 1 ? char.charCodeAt(0) : 0x3f)),
    );
  if (!windows1252) {
    const decoder = new TextDecoder('windows-1252');
    windows1252 = new Map(Array.from({ length: 256 }, (_, byte) => [decoder.decode(Uint8Array.of(byte)), byte]));
  }
  const table = windows1252;
  return Buffer.from(Array.from(text, (char) => table.get(char) ?? 0x3f));
}
