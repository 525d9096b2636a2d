import { env } from "cloudflare:workers";
import { vi } from "vitest";

/** A D1 statement's SQL, as workerd's binding keeps it. */
const sqlOf = (statement: D1PreparedStatement) => String((statement as unknown as { statement: string }).statement);

/**
 * A step of a stepped deletion (`deleteSome`): work in the background, which an earlier file's
 * deletion may still be doing while a test waits for a request's write to the same table.
 */
const STEPPED_DELETION = /^delete from "(\w+)" where "\1"\."id" in \(select "id" from "\1" where /;

/**
 * Races made deterministic: the first batch whose SQL matches a hook's pattern runs the hook's
 * `meanwhile` (another request, to its end) before it goes on. The request whose write that is has
 * read all it read before, so `meanwhile` lands between its reads and its write, as a concurrent
 * request's may. Steps of stepped deletions match no pattern unless `steppedDeletions` says they are
 * the writes waited for. Returns what each `meanwhile` gave, in the order they ended;
 * `vi.restoreAllMocks()` ends the spying.
 */
export function beforeWrites(hooks: [RegExp, () => Promise<unknown>][], { steppedDeletions = false } = {}) {
  const ran: unknown[] = [];
  const pending = [...hooks];
  const withSession = env.DB.withSession.bind(env.DB);
  const awaited = (query: string, pattern: RegExp) =>
    pattern.test(query) && (steppedDeletions || !STEPPED_DELETION.test(query));
  vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
    const session = withSession(constraint);
    const batch = session.batch.bind(session);
    session.batch = async <T>(statements: D1PreparedStatement[]) => {
      const index = pending.findIndex(([pattern]) =>
        statements.some((statement) => awaited(sqlOf(statement), pattern)),
      );
      if (index >= 0) {
        const [[, meanwhile]] = pending.splice(index, 1) as [[RegExp, () => Promise<unknown>]];
        ran.push(await meanwhile());
      }
      return batch<T>(statements);
    };
    return session;
  });
  return ran;
}

/**
 * Every statement the requests' D1 sessions bind goes through `hook` (its SQL, its values, the
 * bound statement), which returns the statement to run: to act at a chosen query, or to make it
 * fail. `vi.restoreAllMocks()` ends the spying.
 */
export function onBoundStatements(
  hook: (query: string, values: unknown[], bound: D1PreparedStatement) => D1PreparedStatement,
) {
  const withSession = env.DB.withSession.bind(env.DB);
  vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
    const session = withSession(constraint);
    const prepare = session.prepare.bind(session);
    session.prepare = (query: string) => {
      const statement = prepare(query);
      const bind = statement.bind.bind(statement);
      statement.bind = (...values: unknown[]) => hook(query, values, bind(...values));
      return statement;
    };
    return session;
  });
}

/** `bound`, a statement that runs only once `meanwhile` (another request, to its end) has. */
export function waitingFor(meanwhile: Promise<unknown>, bound: D1PreparedStatement): D1PreparedStatement {
  const after =
    <T>(run: () => Promise<T>) =>
    async () => {
      await meanwhile;
      return run();
    };
  return {
    ...bound,
    bind: bound.bind.bind(bound),
    all: after(() => bound.all()),
    run: after(() => bound.run()),
    raw: after(() => bound.raw()),
    first: after(() => bound.first()),
  } as unknown as D1PreparedStatement;
}
