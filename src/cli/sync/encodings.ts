/** The text encodings a source file may come in, and a `--failed` file is written back in. */
export type SourceEncoding = 'utf-8' | 'latin1' | 'windows-1252' | 'utf-16le';

/** Windows-1252's bytes 0x80 to 0x9F, by the character each stands for (the rest is Latin-1's). */
const CP1252: ReadonlyMap<number, number> = new Map(
  [
    0x20ac, -1, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, -1, 0x017d, -1,
    -1, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, -1, 0x017e,
    0x0178,
  ]
    .map((code, i): [number, number] => [code, 0x80 + i])
    .filter(([code]) => code !== -1),
);

/** One byte a character, for Latin-1 and Windows-1252: a character the code page has no byte for is `?`. */
function singleByte(text: string, table: ReadonlyMap<number, number> | undefined): Buffer {
  const bytes = Buffer.alloc(text.length);
  let n = 0;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    const mapped = table?.get(code);
    const byte = mapped ?? (code < 0x100 && (table === undefined || code < 0x80 || code > 0x9f) ? code : 0x3f);
    bytes[n++] = byte;
  }
  return bytes.subarray(0, n);
}

/** `text` in `encoding`'s bytes (a character it cannot say is `?`): no byte order mark. */
export function encodeText(text: string, encoding: SourceEncoding): Buffer {
  switch (encoding) {
    case 'latin1':
      return singleByte(text, undefined);
    case 'windows-1252':
      return singleByte(text, CP1252);
    case 'utf-16le':
      return Buffer.from(text, 'utf16le');
    default:
      return Buffer.from(text, 'utf8');
  }
}

/** The byte order mark a file in `encoding` starts with: UTF-16's, which a reader needs to know it. */
export const byteOrderMark = (encoding: SourceEncoding): Buffer =>
  encoding === 'utf-16le' ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0);
