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

/** Each D1 session the requests open, handed to `wrap` before its first use (`vi.restoreAllMocks()` ends it). */
function onSessions(wrap: (session: D1DatabaseSession) => void) {
  const withSession = env.DB.withSession.bind(env.DB);
  vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
    const session = withSession(constraint);
    wrap(session);
    return session;
  });
}

/** The results of the session's single statements (`all`, `raw`, `first`, `run`), each handed to `observe`. */
function afterStatements(session: D1DatabaseSession, observe: (result: unknown, method: string) => void) {
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
          observe(result, method);
          return result;
        };
      }
      return bound;
    };
    return statement;
  };
}

/** The session's batches, each handed to `run` (with the batch itself to call). */
function aroundBatches(session: D1DatabaseSession, run: (batch: () => Promise<D1Result[]>) => Promise<D1Result[]>) {
  const batch = session.batch.bind(session);
  session.batch = (async (statements: D1PreparedStatement[]) => run(() => batch(statements))) as typeof session.batch;
}

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
  onSessions((session) => {
    aroundBatches(session, async (batch) => {
      const results = await batch();
      assertWithinD1Cap(results);
      return results;
    });
    afterStatements(session, assertWithinD1Cap);
  });
}

/** The failure the emulation below gives a statement D1 would refuse; the batch then fails as D1's does. */
const REFUSED = "select json('value past D1''s cap')";

/**
 * D1 also refuses to bind a string past its 2,000,000 bytes, or to build one within a statement
 * (SQLITE_TOOBIG), where local SQLite goes on. `emulateD1TooBig` fails such statements as D1 does,
 * with D1's error: any statement binding so long a string, and a dashboard version's snapshot (the
 * one large value the API builds in SQL) whose length is past it; and those `refuse` names, as
 * though they held such a value (`vi.restoreAllMocks()` ends it).
 */
export function emulateD1TooBig(options: { refuse?: (query: string) => boolean } = {}) {
  onSessions((session) => {
    const prepare = session.prepare.bind(session);
    let refusing = false;
    session.prepare = (query: string) => {
      const statement = prepare(query);
      const bind = statement.bind.bind(statement);
      statement.bind = (...values: unknown[]) => {
        const tooLong = (value: unknown) =>
          typeof value === "string" && encoder.encode(value).length > D1_MAX_VALUE_BYTES;
        if (values.some(tooLong) || options.refuse?.(query)) {
          refusing = true;
          return prepare(REFUSED);
        }
        const guarded = snapshotWithinD1Cap(query);
        if (guarded === undefined) return bind(...values);
        refusing = true;
        return prepare(guarded).bind(...values);
      };
      return statement;
    };
    aroundBatches(session, async (batch) => {
      try {
        return await batch();
      } catch (error) {
        if (refusing && String(error).includes("malformed JSON")) {
          throw new Error("D1_ERROR: string or blob too big: SQLITE_TOOBIG");
        }
        throw error;
      } finally {
        refusing = false;
      }
    });
  });
}

/**
 * A dashboard version's insert, made to fail (as `REFUSED` does) where its snapshot is longer than
 * D1 lets a value be.
 */
function snapshotWithinD1Cap(query: string): string | undefined {
  const at = query.indexOf("where length(cast(json_object(");
  if (!query.startsWith('insert into "dashboard_versions"') || at < 0) return undefined;
  const snapshot = query.slice(at + "where length(cast(".length, query.indexOf(" as blob)) <= ?", at));
  const failing = `(case when length(cast(${snapshot} as blob)) > ${D1_MAX_VALUE_BYTES} then json('x') else 1 end)`;
  return `${query.slice(0, at)}where ${failing} and ${query.slice(at + "where ".length)}`;
}

/**
 * The bytes of the rows D1 hands the Worker, over every batch and single statement of the requests
 * made until `vi.restoreAllMocks()`: what a read costs the isolate's memory, whatever it answers.
 */
export function countBytesRead() {
  const read = { bytes: 0 };
  const count = (rows: unknown) => {
    read.bytes += encoder.encode(JSON.stringify(rows) ?? "").byteLength;
  };
  onSessions((session) => {
    aroundBatches(session, async (batch) => {
      const results = await batch();
      count(results.map((result) => result.results));
      return results;
    });
    afterStatements(session, (result, method) => {
      if (method !== "run") count(method === "all" ? (result as D1Result).results : result);
    });
  });
  return read;
}
