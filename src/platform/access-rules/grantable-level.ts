import { sql, type SQLWrapper } from "drizzle-orm";
import { isAdmin, isAdminInSql } from "../levels";
import type { AccessLevelOf } from "./member-rule";

type Granted = Exclude<AccessLevelOf<"project">, "none">;

/**
 * What an inviter may grant on a project, asked for `requested`: an organization admin, or a
 * member whose rule (`ruleOfMember`: their own, else the default, else `member`) is `admin`,
 * anything; a member whose rule is `member` at most `member`; one who does not see the project
 * nothing (null). Checked when the invite is made and again when it is redeemed.
 */
export function grantableLevel(
  inviterLevel: number,
  rule: AccessLevelOf<"project"> | null,
  requested: Granted,
): Granted | null {
  const own = isAdmin(inviterLevel) ? "admin" : (rule ?? "member");
  if (own === "admin") return requested;
  return own === "member" ? "member" : null;
}

/** `grantableLevel` in SQL. */
export function grantableLevelInSql(inviterLevel: SQLWrapper, rule: SQLWrapper, requested: SQLWrapper) {
  const own = sql`coalesce(${rule}, 'member')`;
  return sql<Granted | null>`case
  when ${isAdminInSql(inviterLevel)} or ${own} = 'admin' then ${requested}
  when ${own} = 'member' then 'member'
end`;
}
