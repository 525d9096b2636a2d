import { env } from "cloudflare:workers";
import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { users } from "../../src/db/schema";
import { createDatabase, D1Meter, inJsonList, type Database } from "../../src/platform/db";
import type { Actor } from "../../src/platform/env";
import { prepared } from "../../src/platform/prepared";
import { createUser } from "../support/harness";

const database = () => createDatabase(env.DB.withSession("first-primary"), new D1Meter());

const actorOf = (userId: number, scopedTeams: number[] = []): Actor => ({
  kind: "user",
  organizationId: null,
  userId,
  userUuid: `uuid-${userId}`,
  keyId: `key-${userId}`,
  scopes: ["*"],
  scopedOrganizations: [],
  scopedTeams,
  keyExpiresAt: null,
  replacedValue: false,
  secureValue: `hash-${userId}`,
});

/** Users by id, or `@current` (the actor's own), or within a list: a builder of every shape `prepared` tells apart. */
function usersOf(db: Database, actor: Actor, id: number | "@current", emailLike: string | undefined) {
  return db
    .select({ id: users.id, email: users.email })
    .from(users)
    .where(
      sql`${id === "@current" ? eq(users.id, actor.userId) : eq(users.id, id)}
        ${emailLike === undefined ? sql`` : sql`and ${users.email} like ${emailLike}`}
        ${actor.scopedTeams.length > 0 ? sql`and ${inJsonList(users.id, actor.scopedTeams)}` : sql``}`,
    )
    .orderBy(asc(users.id));
}

describe("prepared statements", () => {
  it("answer as the statement built for each request would, building each shape's SQL once", async () => {
    const db = database();
    const [first, second] = [await createUser(), await createUser()];
    let builds = 0;
    const preparedUsers = prepared((db: Database, actor: Actor, id: number | "@current", like: string | undefined) => {
      builds += 1;
      return usersOf(db, actor, id, like);
    });
    const cases: [Actor, number | "@current", string | undefined][] = [
      [actorOf(first.id), second.id, undefined],
      [actorOf(second.id), first.id, undefined],
      [actorOf(first.id), "@current", undefined],
      [actorOf(second.id), "@current", undefined],
      [actorOf(first.id), second.id, "%@%"],
      [actorOf(first.id), second.id, "nobody"],
      [actorOf(first.id, [first.id]), second.id, undefined],
      [actorOf(first.id, [second.id, first.id]), second.id, undefined],
    ];
    for (const [actor, id, like] of cases) {
      const expected = await usersOf(db, actor, id, like);
      const [batched] = await db.batch([preparedUsers(db, actor, id, like)]);
      expect(batched).toEqual(expected);
      expect(await preparedUsers(db, actor, id, like)).toEqual(expected);
    }
    // Shapes: an id or `@current`, with or without a pattern, with or without scoped teams; each built twice.
    expect(builds).toBe(2 * 4);
    expect((await preparedUsers(db, actorOf(second.id), second.id, undefined)).map((row) => row.id)).toEqual([
      second.id,
    ]);
  });

  it("build an argument's null and its undefined as two shapes", async () => {
    const db = database();
    const user = await createUser({ lastLogin: null });
    const byLogin = prepared((db: Database, id: number, login: string | null | undefined) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(
          and(
            eq(users.id, id),
            login === undefined ? undefined : login === null ? isNull(users.lastLogin) : eq(users.lastLogin, login),
          ),
        ),
    );
    expect(await byLogin(db, user.id, undefined)).toEqual([{ id: user.id }]);
    expect(await byLogin(db, user.id, null)).toEqual([{ id: user.id }]);
    await db.update(users).set({ lastLogin: new Date().toISOString() }).where(eq(users.id, user.id));
    // Were null served undefined's statement (no condition), it would still find the user.
    expect(await byLogin(db, user.id, undefined)).toEqual([{ id: user.id }]);
    expect(await byLogin(db, user.id, null)).toEqual([]);
  });

  it("bind each value once, however often the statement reads it; a quoted ? is no parameter", async () => {
    const db = database();
    const user = await createUser();
    const manyTimes = prepared((db: Database, id: number) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(
          sql`'?' = '?' and ${users.id} in (${sql.join(
            Array.from({ length: 150 }, () => sql`${id}`),
            sql`, `,
          )})`,
        ),
    );
    expect(await manyTimes(db, user.id)).toEqual([{ id: user.id }]);
    expect(await manyTimes(db, -1)).toEqual([]);
  });

  it("a statement built per request binds past D1's 100 parameters as long as its distinct values fit", async () => {
    const db = database();
    const user = await createUser();
    const repeated = (id: number, other: string) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(
          sql`'?' = '?' and ${users.id} in (${sql.join(
            Array.from({ length: 150 }, (_, index) => sql`${index % 2 === 0 ? id : other}`),
            sql`, `,
          )})`,
        );
    expect(await repeated(user.id, "x")).toEqual([{ id: user.id }]);
    expect(await db.batch([repeated(-1, "y"), repeated(user.id, "y")])).toEqual([[], [{ id: user.id }]]);
  });

  it("refuses a builder that writes a value into the SQL text", () => {
    const inText = prepared((db: Database, id: number) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(sql.raw(`id = ${id}`)),
    );
    expect(() => inText(database(), 1)).toThrow("a prepared statement's SQL depends on a value");
  });

  it("refuses a builder that binds a value in another form than its own", () => {
    const changed = prepared((db: Database, id: number) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.id, id + 1)),
    );
    expect(() => changed(database(), 1)).toThrow("binds a value in another form than its own");
    const counted = prepared((db: Database, ids: number[]) =>
      db.select({ id: users.id }).from(users).where(eq(users.id, ids.length)),
    );
    expect(() => counted(database(), [1, 2])).toThrow("binds a value in another form than its own");
  });

  it("refuses a builder that binds a list's items one by one (its SQL follows the list's length)", () => {
    const listed = prepared((db: Database, ids: number[]) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(sql`${users.id} in (${sql.join(ids, sql`, `)})`),
    );
    expect(() => listed(database(), [1, 2])).toThrow("a prepared statement's SQL depends on a value");
  });
});
