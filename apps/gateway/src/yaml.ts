/**
 * JSON as YAML 1.2 for `/openapi.yaml` (production has no YAML library): strings plain where that
 * reads back the same, block literals across lines, else JSON-quoted.
 */
export function toYaml(value: unknown): string {
  return `${isBlock(value) ? block(value as object, 0) : inline(value, 0)}\n`;
}

const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;
const NUMERIC = /^[-+]?(\d[\d_]*\.?[\d_]*|\.\d+)([eE][-+]?\d+)?$|^[-+]?\.(inf|nan)$|^0[xob]/i;
const PLAIN = /^[A-Za-z0-9_/$][A-Za-z0-9 _./$@+()',=-]*$|^[A-Za-z0-9_/][^\n]*$/;

function isPlain(text: string): boolean {
  if (text === '' || text !== text.trim() || RESERVED.test(text) || NUMERIC.test(text)) return false;
  if (!PLAIN.test(text)) return false;
  // Indicators that change the meaning of a plain scalar inside it: ": ", " #", and a final ":".
  if (/: | #|:$|^\d+(:\d+)+$/.test(text)) return false;
  // Flow indicators and quotes are legal inside block plain scalars, but keep the text unambiguous.
  return !/[{}[\]"`\\|>*&!%]/.test(text);
}

function scalar(text: string, indent: number): string {
  if (isPlain(text)) return text;
  const lines = text.split('\n');
  if (lines.length > 1 && !/^\s/.test(text) && !text.endsWith('\n') && !text.includes('\r')) {
    const pad = ' '.repeat(indent + 2);
    return `|-\n${lines.map((line) => (line === '' ? '' : `${pad}${line}`)).join('\n')}`;
  }
  return JSON.stringify(text);
}

function key(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_.$-]*$/.test(name) && !RESERVED.test(name) ? name : JSON.stringify(name);
}

/** A scalar, or an empty collection, written after `key: ` or `- ` at `indent`. */
function inline(value: unknown, indent: number): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean' || typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') return scalar(value, indent);
  return Array.isArray(value) ? '[]' : '{}';
}

/** A non-empty object or array as block lines, each starting with `indent` spaces. */
function block(value: object, indent: number): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    return value
      .map((item: unknown) => {
        if (!isBlock(item)) return `${pad}- ${inline(item, indent)}`;
        if (Array.isArray(item)) return `${pad}-\n${block(item, indent + 2)}`;
        // The item's first line takes the dash: "  key: v" at indent + 2 becomes "- key: v".
        return `${pad}- ${block(item as object, indent + 2).slice(indent + 2)}`;
      })
      .join('\n');
  }
  return Object.entries(value as Record<string, unknown>)
    .filter(([, inner]) => inner !== undefined)
    .map(([name, inner]) =>
      isBlock(inner)
        ? `${pad}${key(name)}:\n${block(inner as object, indent + 2)}`
        : `${pad}${key(name)}: ${inline(inner, indent)}`,
    )
    .join('\n');
}

/** Non-empty objects and arrays go on their own lines below their key. */
function isBlock(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return typeof value === 'object' && value !== null && Object.keys(value).length > 0;
}
