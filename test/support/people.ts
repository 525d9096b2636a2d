import { env } from "cloudflare:workers";
import { and, eq, sql } from "drizzle-orm";
import { expect, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { mintInviteToken } from "../../src/organizations/invites/invite-tokens";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { api, db, errorBody, setupOrganization, type TestUser } from "./harness";

/** An invite arranged directly in D1, e.g. back-dated past its 3 days, with its acceptance token. */
export async function insertInvite(
  organizationId: string,
  createdBy: TestUser,
  fields: Partial<typeof schema.invites.$inferInsert> = {},
) {
  const now = nowIso();
  const token = await mintInviteToken();
  const [invite] = await db
    .insert(schema.invites)
    .values({
      id: uuid7(),
      organizationId,
      targetEmail: `invitee-${uuid7()}@example.com`,
      level: 1,
      sendEmail: false,
      combinePendingInvites: false,
      createdById: createdBy.id,
      tokenHash: token.hash,
      createdAt: now,
      updatedAt: now,
      ...fields,
    })
    .returning();
  // An invite dated back (an old one) was sent by an inviter who was a member then already.
  await db
    .update(schema.organizationMemberships)
    .set({ joinedAt: sql`min(${schema.organizationMemberships.joinedAt}, ${invite!.createdAt})` })
    .where(
      and(
        eq(schema.organizationMemberships.organizationId, organizationId),
        eq(schema.organizationMemberships.userId, createdBy.id),
      ),
    );
  return { ...invite!, token: token.value };
}

/**
 * An invite write's batch (`beforeWrites`): the open invites to its e-mails it replaces, deleted by
 * e-mail. Not the stepped deletes of an organization being deleted in the background, which a
 * looser pattern would catch instead.
 */
export const INVITE_WRITE = /^delete from "invites" where .*"target_email"/;

export const daysAgo = (days: number, extraMs = 0) =>
  new Date(Date.now() - days * 24 * 60 * 60 * 1000 - extraMs).toISOString();

/**
 * The worker shares this isolate and its `env`: a test turns the e-mail transport on by setting
 * the same wrangler var production reads, and every test gets it back off.
 */
const transportUrlAtStart = env.EMAIL_TRANSPORT_URL;
export const FAKE_TRANSPORT_URL = "https://mail.example.test/send";
export const FAKE_TRANSPORT_TOKEN = "test-transport-token";
export function useEmailTransport() {
  env.EMAIL_TRANSPORT_URL = FAKE_TRANSPORT_URL;
  env.EMAIL_TRANSPORT_TOKEN = FAKE_TRANSPORT_TOKEN;
}

/** For `afterEach`: the transport off, fetch and the clock real again. */
export function restoreTestDoubles() {
  env.EMAIL_TRANSPORT_URL = transportUrlAtStart;
  delete env.EMAIL_TRANSPORT_TOKEN;
  vi.restoreAllMocks();
  vi.useRealTimers();
}

/**
 * The guards every organization route shares: 401 without a key and with a bad one, 404 to a
 * caller who is not a member (the organization's existence does not leak).
 */
export async function expectKeyAndMembershipRequired(method: string, path: string, body?: unknown) {
  const outsider = await setupOrganization();

  const noKey = await api(method, path, { body });
  const badKey = await api(method, path, { key: `phx_${"x".repeat(44)}`, body });
  const notMember = await api(method, path, { key: outsider.key, body });

  expect(noKey.status).toBe(401);
  expect(noKey.body).toEqual(
    errorBody("authentication_error", "not_authenticated", "Authentication credentials were not provided."),
  );
  expect(badKey.status).toBe(401);
  expect(badKey.body).toEqual(
    errorBody("authentication_error", "authentication_failed", "Personal API key is invalid."),
  );
  expect(notMember.status).toBe(404);
  expect(notMember.body).toEqual(errorBody("invalid_request", "not_found", "Not found."));
}
