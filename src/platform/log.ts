import { AsyncLocalStorage } from "node:async_hooks";
import { DrizzleQueryError } from "drizzle-orm/errors";
import { uuid7 } from "./ids";

/** What a line was written in: a request (`request_id`), or a cron or queue run (`run_id`, and which). */
type LogScope = { request_id: string } | { run_id: string; cron: string } | { run_id: string; queue: string };
const logScope = new AsyncLocalStorage<LogScope>();

/** Runs `work` with every line it logs, and the work it leaves behind (`waitUntil`), naming `scope`. */
export const inLogScope = <T>(scope: LogScope, work: () => T): T => logScope.run(scope, work);

/** A cron or queue run's scope: a fresh id, so that the lines of one run can be told from another's. */
export const runScope = (of: { cron: string } | { queue: string }): LogScope => ({ run_id: uuid7(), ...of });

/**
 * One JSON object per log line, for Workers Logs: `level`, the request or run it was written in,
 * what ran (`task`) and the ids that identify its object, never a key, a token, an address or a body.
 */
export function logLine(level: "info" | "warn" | "error", fields: Record<string, unknown>) {
  const line = JSON.stringify({ level, ...logScope.getStore(), ...fields });
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
