import { DrizzleQueryError } from "drizzle-orm/errors";

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
  if (known instanceof DrizzleQueryError) {
    // Its message lists the values the query bound (e-mails, hashes, a body's fields): the SQL
    // and the database's own error say what failed without them.
    const message = `Failed query: ${known.query}`;
    const cause = known.cause instanceof Error ? known.cause.message : undefined;
    return { name: "DrizzleQueryError", message, cause, stack: known.stack?.replace(known.message, message) };
  }
  return { name: known.name, message: known.message, stack: known.stack };
};
