/** `current` with what `patch` sets: an absent (undefined) field keeps its value, null is a value. */
export function applyPatch<T extends object>(current: T, patch: Partial<NoInfer<T>>): T {
  return {
    ...current,
    ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)),
  };
}

/** Whether `next` differs from `current` in any field, dates compared by their instant. */
export function differs<T extends object>(current: T, next: T): boolean {
  return (Object.keys(next) as (keyof T)[]).some((key) => {
    const [a, b] = [current[key], next[key]];
    return a instanceof Date && b instanceof Date ? a.getTime() !== b.getTime() : a !== b;
  });
}
