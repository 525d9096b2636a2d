import type { RequestIdVariables } from "hono/request-id";
import type { TimingVariables } from "hono/timing";
import type { Database, D1Meter } from "./db";
import type { BackgroundJob } from "./jobs";

/**
 * What the Worker is given: the bindings and vars of `wrangler.toml`, typed by `wrangler types`
 * into `worker-configuration.d.ts` (`npm run types` regenerates it; `npm test` fails when it is
 * stale), and, written here, what the configuration does not declare: secrets and local-only
 * settings. The queues' message types are ours too (the generated ones are `Queue<unknown>`).
 */
export type Bindings = Omit<Env, "WEBHOOK_DELIVERIES" | "BACKGROUND_JOBS" | "INVITE_EMAILS"> & {
  /** Webhook deliveries, one message per delivery (a Cloudflare Queue). */
  WEBHOOK_DELIVERIES: Queue<{ deliveryId: string; retryUntil?: string }>;
  /**
   * The e-mails the API sends, one message per e-mail (a Cloudflare Queue): an invite's, or a
   * share link's one-time link to an allow-listed viewer.
   */
  INVITE_EMAILS: Queue<{ inviteId: string } | { viewerLinkId: string }>;
  /** A Worker secret, optional: the bearer token the e-mail transport is called with. */
  EMAIL_TRANSPORT_TOKEN?: string;
  /** Work done in bounded steps, a message per step (`src/jobs.ts`). */
  BACKGROUND_JOBS: Queue<BackgroundJob>;
  /** A Worker secret: 32 random bytes in base64, the key that seals stored secrets (AES-GCM). */
  SECRETS_ENCRYPTION_KEY: string;
  /** Comma-separated former keys, still accepted to open secrets sealed before a rotation. */
  SECRETS_ENCRYPTION_OLD_KEYS?: string;
  /** Set in local development and tests only: webhooks may use http and loopback receivers. */
  WEBHOOKS_ALLOW_INSECURE?: string;
  /**
   * Set in local development, tests and benchmarks only: `Server-Timing` tells the rows a request
   * read and wrote, and its time. Unset (a deployment), it tells round trips alone.
   */
  EXPOSE_D1_COST?: string;
};

/** Who is calling: resolved from the key by the auth middleware. */
export type Actor = {
  /** `user`: a personal API key. `service`: an organization's service key, which acts as that organization. */
  kind: "user" | "service";
  /** A service key's organization; null for a personal key. */
  organizationId: string | null;
  /**
   * For a service key, 0, which no user has: a statement about the caller's user matches nothing.
   * Only the routes that admit service keys (`apiRoute`'s `serviceKeys`) ever see one.
   */
  userId: number;
  userUuid: string;
  keyId: string;
  scopes: string[];
  /** Empty: every organization of the user. */
  scopedOrganizations: string[];
  /** Empty: every project of the user. */
  scopedTeams: number[];
  /** When the value presented stops working; null: never. A key mints or changes none that outlives it. */
  keyExpiresAt: string | null;
  /** The value presented is the one a roll replaced (in its overlap): it works, but manages no key. */
  replacedValue: boolean;
  /**
   * The hash of the value presented. Writes that make or change keys, or join an organization,
   * hold to it still being the key's (`callingKeyLive`): a revocation, roll or account claim
   * landing meanwhile refuses them. Never logged.
   */
  secureValue: string;
  /** The scopes the route requires (`apiRoute` sets them): what an organization's key policy is checked against. */
  requestScopes?: readonly string[];
};

/** A setting turned on only by an explicit yes (`1`, `true`, `yes`): "false" or "0" written to turn it off does not. */
export const isExplicitYes = (value: string | undefined) => /^(1|true|yes)$/i.test((value ?? "").trim());

/**
 * The person behind the caller, for what a write records as its author (`created_by`): null for a
 * service key, which is no person (its user id is no user's, and would name none or a wrong one).
 */
export const personOf = (actor: Actor): number | null => (actor.kind === "user" ? actor.userId : null);

/** The organization named in the path and the caller's membership of it. */
export type OrganizationContext = {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
  membershipId: string;
  level: number;
  membersCanInvite: boolean;
  membersCanUsePersonalApiKeys: boolean;
  /** The other settings a PATCH can change, read with the membership: an update's entry compares them. */
  logoMediaId: string | null;
  isMemberJoinEmailEnabled: boolean;
  enforce2fa: boolean | null;
  allowPubliclySharedResources: boolean;
  activityLogRetentionDays: number | null;
  shareLinkMaxLifetimeDays: number | null;
  personalApiKeyMaxScopes: string[] | null;
  apiKeyMaxLifetimeDays: number | null;
  /** An admin blocked the calling personal key here (`auth/key-policy.ts`). */
  keyBlocked: boolean;
  /** The organization's version: what `If-Match` on its writes is checked against. */
  version: number;
};

/** The project (environment) named in the path and the caller's rights in it. */
export type ProjectContext = {
  projectId: number;
  environmentId: number;
  organizationId: string;
  membershipId: string;
  /** The caller's effective level in the project (an `admin` rule raises a member to 8). */
  level: number;
  /** The caller's level in the project's organization, which no project rule raises. */
  organizationLevel: number;
};

export type AppEnv = {
  Bindings: Bindings;
  Variables: RequestIdVariables &
    TimingVariables & {
      db: Database;
      meter: D1Meter;
      actor: Actor;
      organization: OrganizationContext;
      project: ProjectContext;
      /** The route's `level`, checked wherever its context is resolved (`route-context/`). */
      minimumLevel: number | undefined;
    };
};
