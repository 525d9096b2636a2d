/**
 * A value's JSON text with every object's keys in order, so that two values equal as JSON (whose
 * objects' members are unordered) give the same text: `{"a":1,"b":2}` is `{"b":2,"a":1}`.
 */
export const canonicalJson = (value: unknown): string | undefined =>
  JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0)))
      : item,
  );

/** Whether two values are equal as JSON. */
export const sameJson = (left: unknown, right: unknown) => canonicalJson(left) === canonicalJson(right);
