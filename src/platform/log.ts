/**
 * One JSON object per log line, for Workers Logs: `level`, what ran (`task`) and the ids that
 * identify its object, never a key, a token, an address or a body.
 */
export function logLine(level: "info" | "warn" | "error", fields: Record<string, unknown>) {
  const line = JSON.stringify({ level, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/** An error as a log line holds it. */
export const errorFields = (error: unknown) => {
  const known = error instanceof Error ? error : new Error(String(error));
  return { name: known.name, message: known.message, stack: known.stack };
};
