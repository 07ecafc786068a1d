/*
 * Where a JSON text breaks, without its words: `JSON.parse` quotes the text around the fault
 * ("Unexpected token 's', "sk_live_9f"... is not valid JSON"), which may be a key, and names no
 * position for most faults. The CLI's `--json` and `crm-fake --seed` tell the line and column.
 */

/** Where a JSON text first breaks JSON's grammar: 1-based, a column counted in UTF-16 units. */
export interface JsonFault {
  readonly line: number;
  readonly column: number;
}

const OBJECT = 0;
const ARRAY = 1;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * The offset of the first character that breaks JSON's grammar (the text's length when it ends
 * too soon), or undefined for valid JSON. One pass, no recursion: a text nested a million deep
 * is walked as any other.
 */
function faultOffset(text: string): number | undefined {
  const n = text.length;
  const open: number[] = [];
  let i = 0;
  const skip = () => {
    let c = text.charCodeAt(i);
    while (c === 32 || c === 9 || c === 10 || c === 13) c = text.charCodeAt(++i);
  };
  /** A string at `i`: true past its closing quote, false with `i` at its fault. */
  const string = (): boolean => {
    if (text[i] !== '"') return false;
    for (i++; i < n; ) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c !== 92) i++;
      else {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return false;
        i = ESCAPE.lastIndex;
      }
    }
    return false;
  };
  /** A key and its colon, after `{` or a `,` in an object. */
  const key = (): boolean => {
    skip();
    if (!string()) return false;
    skip();
    if (text[i] !== ':') return false;
    i++;
    return true;
  };
  let value = true;
  for (;;) {
    skip();
    if (value) {
      const c = text[i];
      if (c === '{' || c === '[') {
        i++;
        skip();
        if (text[i] === (c === '{' ? '}' : ']')) {
          i++;
          value = false;
          continue;
        }
        open.push(c === '{' ? OBJECT : ARRAY);
        if (c === '{' && !key()) return i;
        continue;
      }
      if (c === '"') {
        if (!string()) return i;
      } else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
        NUMBER.lastIndex = i;
        if (!NUMBER.test(text)) return i + 1;
        i = NUMBER.lastIndex;
      } else {
        const word = text.startsWith('true', i)
          ? 4
          : text.startsWith('null', i)
            ? 4
            : text.startsWith('false', i)
              ? 5
              : 0;
        if (word === 0) return i;
        i += word;
      }
      value = false;
      continue;
    }
    const inside = open.at(-1);
    if (inside === undefined) return i < n ? i : undefined;
    const c = text[i];
    if (c === ',') {
      i++;
      if (inside === OBJECT && !key()) return i;
      value = true;
    } else if (c === (inside === OBJECT ? '}' : ']')) {
      i++;
      open.pop();
    } else return i;
  }
}

/**
 * Where `text` first breaks JSON's grammar, as a line and column; undefined when it is valid.
 * Call it after `JSON.parse` refused the text, to say where without quoting it.
 */
export function jsonFaultOf(text: string): JsonFault | undefined {
  const at = faultOffset(text);
  if (at === undefined) return undefined;
  let line = 1;
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < at; nl = text.indexOf('\n', nl + 1)) {
    line++;
    start = nl + 1;
  }
  return { line, column: at - start + 1 };
}

/**
 * Where `text` breaks, to follow "is not valid JSON": ` (line 3, column 12)`, or nothing when the
 * fault cannot be placed. Never a word of the text, which may hold a key.
 */
export const faultText = (text: string): string => {
  const fault = jsonFaultOf(text);
  return fault ? ` (line ${fault.line}, column ${fault.column})` : '';
};
