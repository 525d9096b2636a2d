import { sql, type SQLWrapper } from "drizzle-orm";

/** Organization membership levels, as PostHog numbers them. */
export const MembershipLevel = { member: 1, admin: 8, owner: 15 } as const;
export type MembershipLevel = (typeof MembershipLevel)[keyof typeof MembershipLevel];

export const isAdmin = (level: number) => level >= MembershipLevel.admin;

/** `isAdmin` for a level read in SQL (null, not a member: false). */
export const isAdminInSql = (level: SQLWrapper) => sql<boolean>`coalesce(${level} >= ${MembershipLevel.admin}, 0)`;
