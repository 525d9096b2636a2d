import type { ApiKeyHourCounter } from "./auth/rate-limit";
import type { RequestIdVariables } from "hono/request-id";
import type { TimingVariables } from "hono/timing";
import type { Database, D1Meter } from "./db";
import type { BackgroundJob } from "./jobs";

export type Bindings = {
  DB: D1Database;
  API_KEY_CACHE: KVNamespace;
  /** One counter per API key of its requests in the clock hour, told after each response. */
  API_KEY_HOUR_COUNTER: DurableObjectNamespace<ApiKeyHourCounter>;
  /** Requests a key may make in a minute, per location (its limit is set in wrangler.toml). */
  API_KEY_MINUTE_LIMITER: RateLimit;
  /** Keys refused (401) per client address, per location: past it, 429. */
  AUTH_FAILURE_LIMITER: RateLimit;
  /** Requests a key may make in a clock hour, from every location together. */
  RATE_LIMIT_PER_HOUR: string;
  /** DNS-over-HTTPS JSON resolver for domain verification. */
  DNS_RESOLVER_URL: string;
  /** HTTP endpoint that receives outgoing e-mails as JSON; empty disables e-mail. */
  EMAIL_TRANSPORT_URL: string;
  /** A Worker secret: 32 random bytes in base64, the key that seals stored secrets (AES-GCM). */
  SECRETS_ENCRYPTION_KEY: string;
  /** Comma-separated former keys, still accepted to open secrets sealed before a rotation. */
  SECRETS_ENCRYPTION_OLD_KEYS?: string;
  /** The origin callers use (`https://api.example.com`), for links; empty: the request's own. */
  PUBLIC_BASE_URL?: string;
  /** Webhook deliveries, one message per delivery (a Cloudflare Queue). */
  WEBHOOK_DELIVERIES: Queue<{ deliveryId: string }>;
  /** Work done in bounded steps, a message per step (`src/jobs.ts`). */
  BACKGROUND_JOBS: Queue<BackgroundJob>;
  /** The parts of activity-log exports, one object per part, read back through the API only. */
  ACTIVITY_LOG_EXPORTS: R2Bucket;
  /** Set in local development and tests only: webhooks may use http and loopback receivers. */
  WEBHOOKS_ALLOW_INSECURE?: string;
  /** Days activity-log entries are kept (default 365). */
  ACTIVITY_LOG_RETENTION_DAYS?: string;
  /** Comma-separated origins allowed by CORS; empty: none. */
  CORS_ORIGINS?: string;
};

/** Who is calling: resolved from the personal API key by the auth middleware. */
export type Actor = {
  userId: number;
  userUuid: string;
  keyId: string;
  scopes: string[];
  /** Empty: every organization of the user. */
  scopedOrganizations: string[];
  /** Empty: every project of the user. */
  scopedTeams: number[];
};

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
};

/** The project (environment) named in the path and the caller's rights in it. */
export type ProjectContext = {
  projectId: number;
  environmentId: number;
  organizationId: string;
  membershipId: string;
  level: number;
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
    /** The route's `level`, for a context resolved by the handler (`deferContext`). */
    minimumLevel: number | undefined;
    /** Set when the handler, not a middleware, resolves the organization or project. */
    contextDeferred: boolean | undefined;
  };
};
