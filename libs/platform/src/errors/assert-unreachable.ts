/** The end of an exhaustive switch: a new case becomes a compile error, and a bug at runtime. */
export function assertUnreachable(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify(value)}`);
}
