import type { RouteHandler } from "@hono/zod-openapi";
import { and, sql } from "drizzle-orm";
import { personalApiKeyBlocks } from "../../db/schema";
import { personalApiKeyActivity } from "../../personal-api-keys/personal-api-keys.activity";
import { writeWithActivity } from "../../platform/activity-log/resource-activity";
import type { AppEnv } from "../../platform/env";
import { insufficientLevel, notFound } from "../../platform/errors";
import { pageEnvelope, readPage } from "../../platform/pagination";
import { organizationRead } from "../../platform/route-context";
import {
  callerInOrganization,
  callerStillAdmin,
  refusedWhenLevelLost,
} from "../../platform/route-context/organization";
import { insertBlock, keyOwnerLevel, listKeysReaching, toOrganizationApiKey } from "./api-keys.queries";
import type { blockApiKey, listApiKeys } from "./api-keys.routes";
import { keyToBlock } from "./api-keys.request";

export const listOrganizationApiKeys: RouteHandler<typeof listApiKeys, AppEnv> = async (c) => {
  const page = readPage(c);
  const listed = await listKeysReaching(organizationRead(c), page);
  return c.json(pageEnvelope(c, page, listed.count, listed.rows.map(toOrganizationApiKey), listed.links), 200);
};

/**
 * The block is read with the membership on every request the key makes (`auth/key-policy.ts`),
 * from D1, not from the key's cache: it applies from the next request, at every location.
 */
export const blockOrganizationApiKey: RouteHandler<typeof blockApiKey, AppEnv> = async (c) => {
  const key = keyToBlock.results(c);
  // A key that does not reach the organization (a service key, another's, one blocked already) is not found.
  if (!key) throw notFound();
  if (key.ownerLevel > c.var.organization.level) throw insufficientLevel();
  const { db, organization, actor } = c.var;
  // Both rules again when the block is written: the caller still an admin, the owner not above them.
  const ownerNotAbove = sql`coalesce(${keyOwnerLevel(organization.id, key.id)}
    <= ${callerInOrganization(actor, organization.id).level}, 0)`;
  const heldWhile = and(callerStillAdmin(actor, organization.id), ownerNotAbove)!;
  await writeWithActivity(
    db,
    insertBlock(db, organization.id, key.id, heldWhile),
    personalApiKeyActivity.record(c, "blocked", {
      organizationId: organization.id,
      itemId: key.id,
      name: key.label,
      context: { owner_email: key.email },
    }),
  ).catch(refusedWhenLevelLost(c, personalApiKeyBlocks.blockedAt));
  return c.body(null, 204);
};
