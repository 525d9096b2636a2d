import { and, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { domains, organizations } from "../../db/schema";
import { isUniqueViolation, whileHolds, type Database } from "../../platform/db";
import { validationError } from "../../platform/errors";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import { nowIso, randomUrlSafeToken } from "../../platform/ids";
import type { OrganizationRead } from "../../platform/route-context";
import { type OrganizationRef } from "../../platform/route-context/organization";
import { counterOf, joinPage, pageOf, selectCount, type ListOrder, type Page } from "../../platform/pagination";
import type { DomainRow } from "./domains.schema";

type DomainSettings = Pick<
  DomainRow,
  "jitProvisioningEnabled" | "ssoEnforcement" | "samlEntityId" | "samlAcsUrl" | "samlX509Cert"
>;
type Statement = BatchItem<"sqlite">;
type DomainChanges = Partial<Pick<DomainRow, "verifiedAt" | "lastVerificationRetry"> & DomainSettings>;

const domainOfOrganization = (organizationId: OrganizationRef, id: string) =>
  and(eq(domains.organizationId, organizationId), eq(domains.id, id));

/** Whether the organization's domain `id` still exists, as SQL. */
export const domainExists = (organizationId: string, id: string) =>
  sql`exists (select 1 from ${domains} where ${domainOfOrganization(organizationId, id)})`;

const byDomain: ListOrder = [
  [domains.domain, "asc"],
  [domains.id, "asc"],
];

/** A page of the organization's domains, sorted by domain (as PostHog), with the organization's counter. */
export async function listDomains(read: OrganizationRead, page: Page) {
  const { db, organizationId } = read;
  const counter = counterOf(organizations.domainCount, eq(organizations.id, organizationId));
  const [[total], rows] = await read.batch([
    selectCount(db, counter),
    db
      .select(getTableColumns(domains))
      .from(domains)
      .innerJoin(...joinPage(db, byDomain, eq(domains.organizationId, organizationId), page)),
  ]);
  const listed = pageOf(byDomain, page, rows);
  return { count: total?.value ?? 0, rows: listed.rows, links: listed.links };
}

export const selectDomain = (read: OrganizationRead, id: string) =>
  read.db.select().from(domains).where(domainOfOrganization(read.organizationId, id));

/** A new, unverified domain with a fresh challenge: 32 random bytes, URL-safe (as PostHog). */
export async function insertDomain(
  db: Database,
  organizationId: string,
  { id, domain }: { id: string; domain: string },
  settings: DomainSettings,
  entry: Statement,
  allowed: SQL,
) {
  try {
    const [row] = await writeWithActivity(
      db,
      db
        .insert(domains)
        .values({
          id,
          organizationId,
          domain: whileHolds(domain, allowed),
          verificationChallenge: randomUrlSafeToken(32),
          ...settings,
          createdAt: nowIso(),
        })
        .returning(),
      entry,
    );
    return row!;
  } catch (error) {
    // Unique across every organization: the message does not say whose it is.
    if (isUniqueViolation(error)) {
      throw validationError("unique", "organization domain with this domain already exists.", "domain");
    }
    throw error;
  }
}

/*
 * Every domain write lands only while `allowed` holds when it runs (the caller still an admin):
 * else a NOT NULL failure, for the caller to answer.
 */

/** `guard`: the update applies only while it holds (see `unchangedSinceRead`). */
export async function updateDomain(
  db: Database,
  organizationId: string,
  id: string,
  changes: DomainChanges,
  guard: SQL | undefined,
  entry: Statement | undefined,
  allowed: SQL,
) {
  const [row] = await writeWithActivity(
    db,
    db
      .update(domains)
      .set({ ...changes, domain: whileHolds(sql`${domains.domain}`, allowed) })
      .where(and(domainOfOrganization(organizationId, id), guard))
      .returning(),
    entry,
  );
  return row;
}

/** Whether the domain is verified, when a guarded write found it changed: undefined once it is gone. */
export async function domainVerifiedAt(db: Database, organizationId: string, id: string) {
  const [row] = await db
    .select({ verifiedAt: domains.verifiedAt })
    .from(domains)
    .where(domainOfOrganization(organizationId, id));
  return row;
}

/**
 * The domain is touched first, so that its entry (which reads its name) is appended only if it
 * exists, and before the delete removes what the entry reads; all in one atomic batch.
 */
export async function deleteDomain(db: Database, organizationId: string, id: string, entry: Statement, allowed: SQL) {
  const ofOrganization = domainOfOrganization(organizationId, id);
  const [, , [row]] = await db.batch([
    db
      .update(domains)
      .set({ domain: whileHolds(sql`${domains.domain}`, allowed) })
      .where(ofOrganization),
    entry,
    db.delete(domains).where(ofOrganization).returning({ id: domains.id }),
  ]);
  return row;
}
