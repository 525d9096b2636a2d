import { env } from "cloudflare:workers";
import { vi } from "vitest";

/**
 * D1 keeps any one string or BLOB value, intermediate ones included, to 2,000,000 bytes; local
 * SQLite has no such cap. `emulateD1ValueCap` holds the requests' D1 sessions to it where they
 * return results: a value past it fails the statement, as D1 fails it (`vi.restoreAllMocks()`
 * ends it).
 */
const D1_MAX_VALUE_BYTES = 2_000_000;
const encoder = new TextEncoder();

function assertWithinD1Cap(value: unknown): void {
  if (typeof value === "string") {
    if (value.length > D1_MAX_VALUE_BYTES / 4 && encoder.encode(value).length > D1_MAX_VALUE_BYTES) {
      throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
    }
  } else if (Array.isArray(value)) {
    for (const item of value) assertWithinD1Cap(item);
  } else if (value !== null && typeof value === "object") {
    for (const item of Object.values(value)) assertWithinD1Cap(item);
  }
}

export function emulateD1ValueCap() {
  const withSession = env.DB.withSession.bind(env.DB);
  vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
    const session = withSession(constraint);
    const batch = session.batch.bind(session);
    session.batch = async <T>(statements: D1PreparedStatement[]) => {
      const results = await batch<T>(statements);
      assertWithinD1Cap(results);
      return results;
    };
    const prepare = session.prepare.bind(session);
    session.prepare = (query: string) => {
      const statement = prepare(query);
      const bind = statement.bind.bind(statement);
      statement.bind = (...values: unknown[]) => {
        const bound = bind(...values);
        for (const method of ["all", "raw", "first", "run"] as const) {
          const original = (bound[method] as (...args: unknown[]) => Promise<unknown>).bind(bound);
          (bound as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
            const result = await original(...args);
            assertWithinD1Cap(result);
            return result;
          };
        }
        return bound;
      };
      return statement;
    };
    return session;
  });
}
