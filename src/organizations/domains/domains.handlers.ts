import type { RouteConfig, RouteHandler } from "@hono/zod-openapi";
import { isNull } from "drizzle-orm";
import type { AppEnv } from "../../platform/env";
import { domains } from "../../db/schema";
import { refusedWhenNull, unchangedSinceRead } from "../../platform/db";
import { changedOrGone, notFound, validationError } from "../../platform/errors";
import { nowIso, uuid7 } from "../../platform/ids";
import { organizationRead } from "../../platform/route-context";
import { callerStillAdmin, levelLost } from "../../platform/route-context/organization";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { lookupTxtRecords } from "../../platform/dns";
import { domainSettings, NEW_DOMAIN } from "./domain-settings";
import { domainActivity, domainItem, domainNameInBatch, trackedDomainFields } from "./domains.activity";
import * as queries from "./domains.queries";
import { domainOfPath, readDomainOfPath } from "./domains.request";
import type * as routes from "./domains.routes";
import { toDomain } from "./domains.schema";

/** Where the challenge is published: a TXT record of `_posthog-challenge.<domain>` (as PostHog). */
const challengeRecordName = (domain: string) => `_posthog-challenge.${domain}`;

/** A route's handler (`routes` also holds the reads declared beside the routes). */
type Handler<R extends keyof typeof routes> = RouteHandler<Extract<(typeof routes)[R], RouteConfig>, AppEnv>;

export const listOrganizationDomains: Handler<"listDomains"> = async (c) => {
  const page = readPage(c);
  const result = await queries.listDomains(organizationRead(c), page);
  return c.json(pageEnvelope(c, page, result.count, result.rows.map(toDomain), result.links), 200);
};

export const createOrganizationDomain: Handler<"createDomain"> = async (c) => {
  const { domain, ...settings } = c.req.valid("json");
  const organizationId = c.var.organization.id;
  const id = uuid7();
  const entry = domainActivity.record(c, "created", domainItem(organizationId, id, domain));
  const row = await refusedWhenNull(
    queries.insertDomain(
      c.var.db,
      organizationId,
      { id, domain },
      domainSettings(NEW_DOMAIN, settings),
      entry,
      callerStillAdmin(c.var.actor, organizationId),
    ),
    levelLost(c),
  );
  return c.json(toDomain(row), 201);
};

export const retrieveOrganizationDomain: Handler<"retrieveDomain"> = async (c) => {
  const [[row]] = await readDomainOfPath(c);
  if (!row) throw notFound();
  return c.json(toDomain(row), 200);
};

export const updateOrganizationDomain: Handler<"updateDomain"> = async (c) => {
  const { db, organization } = c.var;
  const { id } = c.req.valid("param");
  const [[current]] = domainOfPath.results(c);
  if (!current) throw notFound();
  const settings = domainSettings(current, c.req.valid("json"));
  // The rules were checked against the domain as read: two PATCHes at once must not combine
  // into a state neither was checked for (SAML enforced with a SAML field cleared).
  const guard = unchangedSinceRead([
    [domains.verifiedAt, current.verifiedAt],
    [domains.jitProvisioningEnabled, current.jitProvisioningEnabled],
    [domains.ssoEnforcement, current.ssoEnforcement],
    [domains.samlEntityId, current.samlEntityId],
    [domains.samlAcsUrl, current.samlAcsUrl],
    [domains.samlX509Cert, current.samlX509Cert],
  ]);
  const item = domainItem(organization.id, id, current.domain);
  const entry = domainActivity.changed(c, "updated", item, trackedDomainFields(current), trackedDomainFields(settings));
  const updated = await refusedWhenNull(
    queries.updateDomain(
      db,
      organization.id,
      id,
      settings,
      guard,
      entry,
      callerStillAdmin(c.var.actor, organization.id),
    ),
    levelLost(c),
  );
  if (!updated) throw await changedOrGone(db, queries.domainExists(organization.id, id), "domain");
  return c.json(toDomain(updated), 200);
};

export const deleteOrganizationDomain: Handler<"deleteDomain"> = async (c) => {
  const { id } = c.req.valid("param");
  const organizationId = c.var.organization.id;
  const entry = domainActivity.record(c, "deleted", domainItem(organizationId, id, domainNameInBatch(id)));
  const deleted = await refusedWhenNull(
    queries.deleteDomain(c.var.db, organizationId, id, entry, callerStillAdmin(c.var.actor, organizationId)),
    levelLost(c),
  );
  if (!deleted) throw notFound();
  return c.body(null, 204);
};

/** A matching TXT record verifies; anything else records the failed attempt. Both 200. */
export const verifyOrganizationDomain: Handler<"verifyDomain"> = async (c) => {
  const { db, organization } = c.var;
  const { id } = c.req.valid("param");
  const [[domain]] = domainOfPath.results(c);
  if (!domain) throw notFound();
  if (domain.verifiedAt !== null) throw alreadyVerified();
  const records = await lookupTxtRecords(c.env.DNS_RESOLVER_URL, challengeRecordName(domain.domain));
  const now = nowIso();
  const matched = records.some((record) => record.trim() === domain.verificationChallenge);
  const changes = matched ? { verifiedAt: now, lastVerificationRetry: null } : { lastVerificationRetry: now };
  // Only a verification that succeeded is recorded; a failed attempt is not.
  const entry = matched
    ? domainActivity.record(c, "verified", domainItem(organization.id, id, domain.domain))
    : undefined;
  // Written only while still unverified: of two verifications at once, one records it (its entry
  // follows the write), and a failed attempt never marks a verified domain. The lookup takes
  // seconds: a caller no longer an admin by then verifies nothing.
  const unverified = isNull(domains.verifiedAt);
  const updated = await refusedWhenNull(
    queries.updateDomain(
      db,
      organization.id,
      id,
      changes,
      unverified,
      entry,
      callerStillAdmin(c.var.actor, organization.id),
    ),
    levelLost(c),
  );
  if (!updated) {
    const current = await queries.domainVerifiedAt(db, organization.id, id);
    throw current?.verifiedAt ? alreadyVerified() : notFound();
  }
  return c.json(toDomain(updated), 200);
};

const alreadyVerified = () => validationError("already_verified", "This domain has already been verified.");
