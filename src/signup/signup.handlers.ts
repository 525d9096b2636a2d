import type { RouteHandler } from "@hono/zod-openapi";
import { and, sql } from "drizzle-orm";
import type { Context } from "hono";
import { inviteTokenHash } from "../organizations/invites/invite-tokens";
import { isInviteExpired } from "../organizations/invites/invites.queries";
import { inviteActivity, inviteItem } from "../organizations/invites/invites.activity";
import { membershipActivity } from "../organizations/members/members.activity";
import { disableWebhooksOfClaimedAccount } from "../organizations/webhooks/webhook-creators";
import type { ActivityActor, ReadInBatch } from "../platform/activity-log/record";
import type { MembershipLevel } from "../platform/levels";
import { personalApiKeyEntries } from "../personal-api-keys/personal-api-keys.activity";
import { toPersonalApiKey } from "../personal-api-keys/personal-api-keys.handlers";
import { mintApiKey } from "../platform/auth/api-keys";
import { forgetRevokedKey } from "../platform/auth/key-lifecycle";
import { authenticateRequest } from "../platform/auth/authenticate";
import { assertAddressMayLookUp, refusal } from "../platform/auth/refused-keys";
import { assertKeyMayJoin } from "../platform/auth/key-scoping";
import {
  callingKeyLive,
  KEY_BLOCKED,
  keyBlockedCondition,
  keysOutliveLifetime,
  latestExpiryAllowed,
  refusalOfGoneKey,
  strictestLifetime,
} from "../platform/auth/key-policy";
import { assertScope } from "../platform/auth/scopes";
import { isNotNullViolation, isUniqueViolation } from "../platform/db";
import type { Actor, AppEnv } from "../platform/env";
import { changedMeanwhile, notFound, permissionDenied, validationError } from "../platform/errors";
import { SERVICE_KEY_REFUSED } from "../platform/route";
import { currentEnvironmentGuessKey } from "../platform/route-context/current-environment-guess";
import { toUserBasic } from "../platform/user-basic";
import {
  claimAndJoin,
  claimChangedMeanwhile,
  claimRefused,
  findInviteForSignup,
  accountToClaim,
  grantedByJoining,
  joinAsExistingUser,
  keyJoinRefused,
  keyLifetimeJoinRefused,
  keyPolicyChangedAtSignup,
  signUpAndJoin,
  type JoinEntries,
  type NewUserEntries,
} from "./signup.queries";
import type { acceptInvite, acceptInviteByBody, previewInvite } from "./signup.routes";
import type { SignupInput } from "./signup.schema";

type FoundInvite = NonNullable<Awaited<ReturnType<typeof findInviteForSignup>>>;

/** PostHog's masking: the first character of the local part, then one `*` per hidden one. */
function maskEmail(email: string) {
  const at = email.indexOf("@");
  // A one-character local part would be shown whole otherwise.
  if (at === 1) return `*${email.slice(at)}`;
  return `${email[0]}${"*".repeat(at - 1)}${email.slice(at)}`;
}

const expired = () => validationError("expired", "This invite has expired. Please ask your admin for a new one.");

/**
 * The invite a token accepts. Anything else (an invite id, a malformed, unknown or superseded
 * token) is the same 404, so that tokens cannot be probed.
 */
async function findInvite(c: Context<AppEnv>, token: string) {
  assertAddressMayLookUp(c);
  const tokenHash = await inviteTokenHash(token);
  const found = tokenHash === null ? undefined : await findInviteForSignup(c.var.db, tokenHash);
  if (!found) throw await refusal(c, notFound);
  return found;
}

export const previewSignup: RouteHandler<typeof previewInvite, AppEnv> = async (c) => {
  const { invite, organizationName, levelGranted } = await findInvite(c, c.req.valid("param").token);
  if (isInviteExpired(invite.createdAt)) throw expired();
  return c.json(
    {
      id: invite.id,
      target_email: maskEmail(invite.targetEmail),
      first_name: invite.firstName,
      organization_name: organizationName,
      level: levelGranted as MembershipLevel,
    },
    200,
  );
};

/**
 * A key is optional here: without one a new account is created; with one, it must be the
 * account the invite names, and the key must be allowed to add memberships.
 */
async function optionalCaller(c: Context<AppEnv>): Promise<Actor | null> {
  if (c.req.header("Authorization") === undefined) return null;
  const actor = await authenticateRequest(c);
  // Joining makes a person a member: a service key is no person.
  if (actor.kind === "service") throw permissionDenied(SERVICE_KEY_REFUSED);
  assertScope(actor, "organization_member:write");
  return actor;
}

/**
 * An account made for the address with a token that proved nothing (the inviter's), which the
 * address's owner takes with the token only the e-mail carried (`claim`).
 */
const claimable = (found: FoundInvite) => found.addressProven && found.account?.user.isEmailVerified === false;

/**
 * PostHog's order of checks and codes. A claim is only made when asked for (`claim_account`):
 * the address's owner may have made the account, handed the inviter's token, and use its keys.
 */
function assertAcceptable(found: FoundInvite, caller: Actor | null, claimAsked: boolean) {
  if (caller && found.account?.user.id !== caller.userId) {
    throw validationError("invalid_recipient", "This invite is intended for another email address.");
  }
  if (isInviteExpired(found.invite.createdAt)) throw expired();
  if (!caller && found.account && !claimable(found)) throw accountExists();
  if (!caller && found.account && !claimAsked) throw claimNotAsked();
  if (found.account?.membershipId) throw alreadyMember();
}

const accountExists = () =>
  validationError(
    "account_exists",
    "An account with this email address already exists. Accept the invite with that account's personal API key.",
  );
const claimNotAsked = () =>
  validationError(
    "account_exists",
    "An account with this email address already exists, its address not proven. Accept the invite with that " +
      "account's personal API key; or, if you did not make it, send claim_account: true to take it over (every key " +
      "it has is revoked).",
    "claim_account",
  );
const alreadyMember = () => validationError("user_already_member", "You already are a member of this organization.");

export const signUpWithInvite: RouteHandler<typeof acceptInvite, AppEnv> = async (c) =>
  c.json(await join(c, c.req.valid("param").token, c.req.valid("json")), 201);

export const signUpWithInviteInBody: RouteHandler<typeof acceptInviteByBody, AppEnv> = async (c) => {
  const { token, ...input } = c.req.valid("json");
  return c.json(await join(c, token, input), 201);
};

/** Joins the organization of the invite `token` accepts, as `acceptInvite` describes. */
async function join(c: Context<AppEnv>, token: string, input: SignupInput) {
  const caller = await optionalCaller(c);
  const found = await findInvite(c, token);
  if (caller) assertKeyMayJoin(caller, found.invite.organizationId);
  assertAcceptable(found, caller, input.claim_account === true);
  const { invite, account } = found;

  if (account && !caller) return claim(c, found, account.user, input);
  const entriesFor = joinEntries(c, found, caller);
  if (account && caller) {
    const entries = entriesFor(account.user);
    const { addressProven } = found;
    // A key an admin blocked in the organization (its holder removed since, and invited again)
    // joins nothing, nor one revoked or rolled meanwhile (or its account claimed): 401 then.
    const live = callingKeyLive(caller, { orReplaced: true });
    const keyHolds = and(live, sql`not ${keyBlockedCondition(caller, invite.organizationId)}`)!;
    await joining(
      () =>
        joinAsExistingUser(c.var.db, invite, account.user.id, entries, addressProven, keyHolds).catch(
          async (error: unknown) => {
            const gone = keyJoinRefused(error) && (await refusalOfGoneKey(c.var.db, caller, { orReplaced: true }));
            throw gone || error;
          },
        ),
      alreadyMember,
      found.keyLifetimeDays,
    );
    const user = { ...account.user, isEmailVerified: account.user.isEmailVerified || addressProven };
    return { user: toUserBasic(user), organization_id: invite.organizationId };
  }
  const key = await mintApiKey();
  // The first key reaches this organization alone: its key policy bounds the key's lifetime.
  const expiresAt = latestExpiryAllowed(found.keyLifetimeDays);
  const created = await joining(
    () =>
      signUpAndJoin(
        c.var.db,
        invite,
        {
          firstName: input.first_name ?? invite.firstName,
          lastName: input.last_name ?? "",
          addressProven: found.addressProven,
        },
        { ...key, expiresAt, lifetimeDays: found.keyLifetimeDays },
        newUserEntries(c, found),
      ),
    accountExists,
    found.keyLifetimeDays,
  );
  return {
    user: toUserBasic(created.user),
    organization_id: invite.organizationId,
    personal_api_key: { ...toPersonalApiKey(created.personalApiKey), value: key.value },
  };
}

/**
 * The address's owner takes the unproven account made for it: its keys (whoever made them) are
 * revoked, and the answer is a new user's, with the account's first key after the claim.
 */
async function claim(
  c: Context<AppEnv>,
  found: FoundInvite,
  account: JoiningUser & { id: number },
  names: SignupInput,
) {
  const key = await mintApiKey();
  // Unlike a new user's, this first key reaches the account's other organizations too: it expires
  // within the strictest of their limits, and its creation is recorded in each of them.
  const { organizations: others, enabledWebhooks } = await accountToClaim(c.var.db, account.id);
  const limits = [found.keyLifetimeDays, ...others.map((other) => other.lifetimeDays)];
  const expiresAt = latestExpiryAllowed(strictestLifetime(limits));
  const claimed = await joining(
    () =>
      claimAndJoin(
        c.var.db,
        found.invite,
        {
          id: account.id,
          organizationIds: others.map((other) => other.id),
          enabledWebhookIds: enabledWebhooks.map((webhook) => webhook.id),
        },
        { firstName: names.first_name, lastName: names.last_name },
        { ...key, expiresAt, lifetimeDays: found.keyLifetimeDays },
        {
          ...newUserEntries(c, found, { claimedIn: others.map((other) => other.id) })(account),
          webhooksDisabled: disableWebhooksOfClaimedAccount(c, account.id, enabledWebhooks),
        },
      ).catch((error: unknown) => {
        if (claimChangedMeanwhile(error)) throw changedMeanwhile("account");
        // Proven meanwhile (another claim won): the account is its owner's now.
        throw claimRefused(error) ? accountExists() : error;
      }),
    accountExists,
    found.keyLifetimeDays,
  );
  await Promise.all(
    claimed.revoked.map((revoked) => forgetRevokedKey(c.env, revoked, currentEnvironmentGuessKey(revoked.id))),
  );
  return {
    user: toUserBasic(claimed.user),
    organization_id: found.invite.organizationId,
    personal_api_key: { ...toPersonalApiKey(claimed.personalApiKey), value: key.value },
  };
}

type JoiningUser = { id: number | ReadInBatch; uuid: string };

/** The joining user, as the entries of their joining name them: with their key if they sent one, else none. */
const joiningActor = (c: Context<AppEnv>, caller: Actor | null, user: JoiningUser): ActivityActor => ({
  userId: user.id,
  apiKeyId: caller?.keyId ?? null,
  isSystem: false,
  requestId: c.get("requestId") ?? null,
});

/**
 * `claimedIn`: the joining user took an unproven account made for their address (`claim`), which
 * belongs to these organizations too.
 */
type JoiningHow = { claimedIn?: string[] };

/**
 * A new account's entries in the invite's organization: the first key it is given (which reaches
 * that organization alone; a claimed account's reaches its others too, whose logs record it as
 * well), then its joining (`joinEntries`), made by the new user without a key.
 */
const newUserEntries =
  (c: Context<AppEnv>, found: FoundInvite, how: JoiningHow = {}) =>
  (user: JoiningUser): NewUserEntries => ({
    keyCreated: (key) =>
      personalApiKeyEntries(
        c,
        "created",
        { ...key, scopes: ["*"], scopedOrganizations: [], scopedTeams: [] },
        [found.invite.organizationId, ...(how.claimedIn ?? [])],
        new Map(),
        joiningActor(c, null, user),
      ),
    join: joinEntries(c, found, null, how)(user),
  });

/**
 * The invite's acceptance, the membership's joining and the other invites' cancellation, in the
 * invite's organization, made by the joining user: with their key if they sent one, else none (a
 * new account has no key yet).
 */
const joinEntries =
  (c: Context<AppEnv>, { invite, otherInviteIds }: FoundInvite, caller: Actor | null, how: JoiningHow = {}) =>
  (user: JoiningUser): JoinEntries =>
  (membershipId) => {
    const actor = joiningActor(c, caller, user);
    const joinedItem = {
      organizationId: invite.organizationId,
      itemId: membershipId,
      name: invite.targetEmail,
      context: { user_uuid: user.uuid, ...(how.claimedIn ? { account_claimed: true } : {}) },
    };
    return {
      joined: membershipActivity.record(c, "joined", joinedItem, actor),
      accepted: inviteActivity.record(
        c,
        "accepted",
        { ...inviteItem(invite, invite.targetEmail), context: grantedByJoining(membershipId) },
        actor,
      ),
      cancelled: otherInviteIds.map((id) => ({
        id,
        entry: inviteActivity.record(
          c,
          "cancelled",
          inviteItem({ id, organizationId: invite.organizationId }, invite.targetEmail),
          actor,
        ),
      })),
    };
  };

/**
 * Another request may have won meanwhile: the invite is gone (404), or the same account or
 * membership was just created (`onDuplicate`). An existing user's holds refuse it with 403
 * (`lifetimeDays`, the organization's limit as read, names the one their keys outlive).
 */
async function joining<T>(write: () => Promise<T>, onDuplicate: () => Error, lifetimeDays: number | null): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (keyJoinRefused(error)) throw permissionDenied(KEY_BLOCKED);
    if (keyLifetimeJoinRefused(error)) throw permissionDenied(keysOutliveLifetime(lifetimeDays));
    if (keyPolicyChangedAtSignup(error)) throw changedMeanwhile("organization's key policy");
    if (isNotNullViolation(error)) throw notFound();
    if (isUniqueViolation(error)) throw onDuplicate();
    throw error;
  }
}
