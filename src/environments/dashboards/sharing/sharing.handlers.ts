import type { RouteHandler } from "@hono/zod-openapi";
import type { SharingSettings } from "../../../db/schema";
import { judgedOnLatest, StaleRead, unlessAsRead } from "../../../platform/conditional-requests";
import { emailTransportConfigured } from "../../../platform/email-transport";
import { personOf, type AppEnv } from "../../../platform/env";
import { dashboards } from "../../../db/schema";
import { isNotNullViolationOf, refusedWhenNull } from "../../../platform/db";
import { changedMeanwhile, notFound, permissionDenied, validationError } from "../../../platform/errors";
import { nowIso, randomUrlSafeToken, uuid7 } from "../../../platform/ids";
import { projectRead } from "../../../platform/route-context";
import type { ProjectTree } from "../../project-trees";
import type { Context } from "hono";
import {
  callerStillEditorOf,
  callerStillSeesDashboard,
  editableDashboard,
  editRightLost,
  parseDashboardId,
  readScopeOf,
  scopeOf,
  visibleDashboard,
} from "../dashboard-request";
import { rightsOn } from "../dashboard-response";
import { selectDashboard, type DashboardRow } from "../dashboards.queries";
import {
  deleteSharePassword,
  insertSharePassword,
  MAX_SHARE_PASSWORDS,
  newAccessToken,
  selectSharePasswords,
  selectSharing,
  selectVerifiedViewers,
  sharingWriteHeld,
  isBothProtections,
  isDashboardDeletedMeanwhile,
  isPasswordProtectionOff,
  isLifetimeChanged,
  lifetimeAsRead,
  notBothProtections,
  type SharingRow,
  toSharePassword,
  toSharingConfiguration,
  isSharingChangedMeanwhile,
  sharingAsRead,
  type TrackedSharing,
  UNWRITTEN_SHARING,
  upsertSharing,
} from "./sharing.queries";
import { hashSharePassword } from "./share-password-hash";
import type { sharingRoutes } from "./sharing.routes";
import { sharingOfPath, sharingOfPathAgain } from "./sharing.request";
import { SHARING_SETTINGS_KEYS, type UpdateSharingInput } from "./sharing.schema";
import { sharingActivity, sharingEntries, sharingItem } from "./sharing.activity";

type SharingRoutes = ReturnType<typeof sharingRoutes<ProjectTree>>;
type Handler<K extends keyof SharingRoutes> = RouteHandler<SharingRoutes[K], AppEnv>;

/** The caller's access to the dashboard, which its sharing answers as `user_access_level`. */
const accessTo = (c: Context<AppEnv>, dashboard: DashboardRow) =>
  rightsOn(dashboard, scopeOf(c).caller).userAccessLevel;

/** One round trip once the configuration exists: project, dashboard and configuration in one batch. */
export const retrieveDashboardSharing: Handler<"retrieve"> = async (c) => {
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard], [sharing], passwords, viewers] = await projectRead(c, (environmentId) => [
    selectDashboard(db, readScopeOf(c, environmentId), dashboardId),
    selectSharing(db, dashboardId),
    selectSharePasswords(db, dashboardId),
    selectVerifiedViewers(db, dashboardId),
  ]);
  const visible = visibleDashboard(c, dashboard);
  const read = sharing ? { row: sharing, passwords, viewers } : await firstSharing(c, visible);
  return c.json(toSharingConfiguration(read, accessTo(c, visible)), 200);
};

/**
 * A dashboard's first read of its sharing makes its configuration (its token), as PostHog's does:
 * only while the caller still sees the dashboard, live. Removed or hidden since the request's read,
 * they get 404, as a moment later, and not a link someone may have turned on meanwhile.
 */
const firstSharing = (c: Context<AppEnv>, { dashboard }: DashboardRow) =>
  upsertSharing(c.var.db, dashboard.id, {}, [
    sharingWriteHeld(c.var.db, dashboard, callerStillSeesDashboard(c, dashboard.id)),
  ]).catch((error: unknown) => {
    if (isNotNullViolationOf(error, dashboards.restrictionLevel) || isDashboardDeletedMeanwhile(error))
      throw notFound();
    throw error;
  });

/**
 * A sharing write whose guard (`sharingWriteHeld`) failed: the caller lost the edit right, the
 * dashboard was deleted (404, as a moment later), or the organization turned public links off,
 * between the request's read and its write; or a password whose link stopped requiring one.
 */
const refusedWhenRightLost =
  (c: Context<AppEnv>) =>
  async (error: unknown): Promise<never> => {
    if (isNotNullViolationOf(error, dashboards.restrictionLevel)) throw await editRightLost(c);
    if (isDashboardDeletedMeanwhile(error)) throw notFound();
    if (isNotNullViolationOf(error, dashboards.sharingEnabled)) throw PUBLIC_SHARING_DISABLED();
    if (isPasswordProtectionOff(error)) throw passwordProtectionOff();
    throw error;
  };

const PUBLIC_SHARING_DISABLED = () => permissionDenied("Public sharing is disabled for this organization.");

const INVALID_SETTINGS = () => validationError("invalid_input", "Invalid settings format", "settings");

/** PostHog's settings keys only, each a boolean; anything else is dropped. Null clears them, as in PostHog. */
function parseSettings(value: unknown): SharingSettings {
  if (value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw INVALID_SETTINGS();
  const settings: SharingSettings = {};
  for (const key of SHARING_SETTINGS_KEYS) {
    const setting: unknown = (value as Record<string, unknown>)[key];
    if (setting === undefined) continue;
    if (typeof setting !== "boolean") throw INVALID_SETTINGS();
    settings[key] = setting;
  }
  return settings;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The expiry a PATCH writes (undefined: unchanged). Under the organization's longest lifetime,
 * a link enabled or given an expiry lives at most that many days from now, and a link without
 * expiry gets that limit.
 */
function expiryOf(
  requested: string | null | undefined,
  enabling: boolean,
  current: string | null,
  maxDays: number | null,
) {
  const wanted = requested === undefined ? undefined : requested && new Date(requested).toISOString();
  if (maxDays === null || (wanted === undefined && !enabling)) return wanted;
  const limit = new Date(Date.now() + maxDays * DAY_MS).toISOString();
  const expiry = wanted === undefined ? current : wanted;
  return expiry === null || expiry > limit ? limit : expiry;
}

/** The allow-list a PATCH writes (undefined: unchanged): without repeats, and null rather than empty. */
const allowListOf = (requested: string[] | null | undefined) =>
  requested === undefined ? undefined : requested && requested.length > 0 ? [...new Set(requested)] : null;

const bothProtections = (requested: string[] | null | undefined) =>
  validationError(
    "invalid_input",
    "A link is protected by passwords or by an e-mail allow-list, not both.",
    requested ? "allowed_emails" : "password_required",
  );

/**
 * A link is closed by passwords or by an allow-list, not both (one session answers either), and an
 * allow-list needs e-mail to send its one-time links.
 */
function assertAllowListPossible(
  c: Context<AppEnv>,
  passwordRequired: boolean,
  allowList: string[] | null,
  requested: string[] | null | undefined,
) {
  if (passwordRequired && allowList !== null) throw bothProtections(requested);
  if (requested && !emailTransportConfigured(c.env)) {
    throw validationError(
      "invalid_input",
      "E-mail is not configured on this server: nobody could receive a one-time link.",
      "allowed_emails",
    );
  }
}

export const updateDashboardSharing: Handler<"update"> = async (c) => {
  const json = c.req.valid("json");
  const settings = json.settings === undefined ? undefined : parseSettings(json.settings);
  const input: SharingUpdate = { ...json, settings, allowed_emails: allowListOf(json.allowed_emails) };
  const first = sharingOfPath.results(c);
  const update = async ([[dashboard], [organization], [current]]: SharingReads, again: boolean) => {
    const editable = editableDashboard(c, dashboard);
    // Read again, it applies what it meant to change: a value sent as read undoes nothing.
    const sent = again ? sharingChangesAsRead(first[2][0] ?? UNWRITTEN_SHARING, input) : input;
    if (sent.enabled === true && !organization?.allowed) throw PUBLIC_SHARING_DISABLED();
    const sharing = await writeSharingUpdate(c, editable.dashboard, organization?.maxDays ?? null, current, sent);
    return toSharingConfiguration(sharing, accessTo(c, editable));
  };
  return c.json(await judgedOnLatest(first, () => sharingOfPathAgain(c), update, "sharing"), 200);
};

/** The values of a sharing PATCH that differ from the configuration `read`: what it meant to change. */
function sharingChangesAsRead(read: TrackedSharing, input: SharingUpdate): SharingUpdate {
  const expiry = input.expires_at && new Date(input.expires_at).toISOString();
  return {
    enabled: unlessAsRead(input.enabled, read.enabled),
    settings: unlessAsRead(input.settings, read.settings),
    expires_at: expiry === undefined || expiry === read.expiresAt ? undefined : input.expires_at,
    password_required: unlessAsRead(input.password_required, read.passwordRequired),
    allowed_emails: unlessAsRead(input.allowed_emails, read.allowedEmails),
  };
}

type SharingReads = Awaited<ReturnType<typeof sharingOfPathAgain>>;

type SharingUpdate = Omit<UpdateSharingInput, "settings"> & { settings: SharingSettings | undefined };

/**
 * A sharing PATCH judged on the configuration `current` as read, which it holds to
 * (`sharingAsRead`: else `StaleRead`, and it is judged again), with its entries.
 */
async function writeSharingUpdate(
  c: Context<AppEnv>,
  shared: DashboardRow["dashboard"],
  maxDays: number | null,
  current: SharingRow | undefined,
  input: SharingUpdate,
) {
  const db = c.var.db;
  const { settings, allowed_emails: allowedEmails } = input;
  const expiresAt = expiryOf(input.expires_at, input.enabled === true, current?.expiresAt ?? null, maxDays);
  const before = current ?? UNWRITTEN_SHARING;
  const after = {
    enabled: input.enabled ?? before.enabled,
    settings: settings ?? before.settings,
    expiresAt: expiresAt === undefined ? before.expiresAt : expiresAt,
    passwordRequired: input.password_required ?? before.passwordRequired,
    allowedEmails: allowedEmails === undefined ? before.allowedEmails : allowedEmails,
  };
  assertAllowListPossible(c, after.passwordRequired, after.allowedEmails, allowedEmails);
  const changes = {
    enabled: input.enabled,
    settings,
    expiresAt,
    passwordRequired: input.password_required,
    allowedEmails,
  };
  const guard = sharingWriteHeld(db, shared, callerStillEditorOf(c, shared.id), input.enabled);
  // Judged on the configuration as read: a change of either protection holds the rule on what it leaves, too.
  const protects = input.password_required !== undefined || allowedEmails !== undefined;
  // Enabling a link, or setting its expiry, is judged on the organization's lifetime limit as read: it holds it.
  const capped = input.enabled === true || input.expires_at !== undefined;
  const holds = [
    guard,
    ...(protects ? [notBothProtections(db, shared.id)] : []),
    ...(capped ? [lifetimeAsRead(db, shared, maxDays)] : []),
    ...sharingEntries(c, shared, before, after),
  ];
  return upsertSharing(db, shared.id, changes, holds, [sharingAsRead(db, shared.id, before)])
    .catch((error: unknown) => {
      if (isSharingChangedMeanwhile(error)) throw new StaleRead();
      if (isBothProtections(error)) throw bothProtections(allowedEmails);
      if (isLifetimeChanged(error)) throw changedMeanwhile("organization's share link lifetime limit");
      throw error;
    })
    .catch(refusedWhenRightLost(c));
}

/** A new token at once: PostHog keeps the old one for 5 minutes, but a refresh usually answers a leak. */
export const refreshDashboardSharing: Handler<"refresh"> = async (c) => {
  const dashboardId = parseDashboardId(c.req.valid("param").dashboard_id);
  const db = c.var.db;
  const [[dashboard]] = sharingOfPath.results(c);
  const editable = editableDashboard(c, dashboard);
  const { dashboard: shared } = editable;
  const entry = sharingActivity.record(c, "access_token_refreshed", sharingItem(c.var.project, shared));
  const guard = sharingWriteHeld(db, shared, callerStillEditorOf(c, dashboardId));
  const sharing = await upsertSharing(db, dashboardId, { accessToken: newAccessToken() }, [guard, entry]).catch(
    refusedWhenRightLost(c),
  );
  return c.json(toSharingConfiguration(sharing, accessTo(c, editable)), 200);
};

const passwordProtectionOff = () =>
  validationError(
    "invalid_input",
    "Password protection must be enabled before creating passwords",
    "password_required",
  );

const passwordProtected = (current: SharingRow | undefined) => {
  if (!current?.passwordRequired) throw passwordProtectionOff();
  return current;
};

const tooManyPasswords = () =>
  validationError(
    "max_length",
    `A share link holds at most ${MAX_SHARE_PASSWORDS} passwords. Delete one before creating another.`,
  );

/** PostHog's: a random password when none is given, shown in the answer and never again. */
export const createSharePassword: Handler<"createPassword"> = async (c) => {
  const input = c.req.valid("json");
  const [[dashboard], , [current], held] = sharingOfPath.results(c);
  const { dashboard: shared } = editableDashboard(c, dashboard);
  const { dashboardId } = passwordProtected(current);
  if (held.length >= MAX_SHARE_PASSWORDS) throw tooManyPasswords();
  const password = input.raw_password || randomUrlSafeToken(12);
  const row = {
    id: uuid7(),
    dashboardId,
    passwordHash: await hashSharePassword(password),
    note: input.note ?? "",
    createdById: personOf(c.var.actor),
    createdAt: nowIso(),
  };
  const entry = sharingActivity.record(c, "password_created", sharingItem(c.var.project, shared));
  const guard = sharingWriteHeld(c.var.db, shared, callerStillEditorOf(c, dashboardId));
  // Another request may take the last place meanwhile.
  const [, , , passwords] = await refusedWhenNull(
    c.var.db
      .batch([guard, insertSharePassword(c.var.db, row), entry, selectSharePasswords(c.var.db, dashboardId)])
      .catch(refusedWhenRightLost(c)),
    tooManyPasswords,
  );
  const created = passwords.find((stored) => stored.id === row.id);
  if (!created) throw new Error("the share password was not read back");
  const { id, note, created_at, created_by_email } = toSharePassword(created);
  return c.json({ id, password, note, created_at, created_by_email }, 201);
};

export const deleteSharePasswordOf: Handler<"deletePassword"> = async (c) => {
  const { password_id } = c.req.valid("param");
  const [[dashboard], , current, passwords] = sharingOfPath.results(c);
  const { dashboard: shared } = editableDashboard(c, dashboard);
  if (!current[0] || !passwords.some((password) => password.id === password_id)) throw notFound();
  const entry = sharingActivity.record(c, "password_deleted", sharingItem(c.var.project, shared));
  const guard = sharingWriteHeld(c.var.db, shared, callerStillEditorOf(c, shared.id));
  const [, deleted] = await c.var.db
    .batch([guard, deleteSharePassword(c.var.db, shared.id, password_id), entry])
    .catch(refusedWhenRightLost(c));
  // Deleted meanwhile (a retry racing its first attempt): as if it had come after.
  if (deleted.length === 0) throw notFound();
  return c.body(null, 204);
};
