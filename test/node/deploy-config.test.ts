import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { experimental_readRawConfig } from "wrangler";
import { describe, expect, it } from "vitest";
import { configProblems } from "../../scripts/check-config.mjs";
import { MINUTE_LIMIT, MINUTE_MS } from "../../src/platform/auth/minute-limit";

/** The parts of wrangler.toml the tests spoil. */
type Fields = Record<string, string>;
type Target = {
  d1_databases: Fields[];
  kv_namespaces: Fields[];
  r2_buckets?: Fields[];
  queues: { consumers?: Fields[] };
  ratelimits: Fields[];
  vars: Fields;
  durable_objects?: unknown;
};
type Config = Target & { env: Record<string, Target> };

/** wrangler.toml as wrangler reads it: a copy for each test to spoil. */
const CONFIG_PATH = fileURLToPath(new URL("../../wrangler.toml", import.meta.url));
const config = () =>
  structuredClone(experimental_readRawConfig({ config: CONFIG_PATH }).rawConfig) as unknown as Config;

describe("the deploy configuration check", () => {
  it("finds nothing wrong with wrangler.toml, which has staging and production", () => {
    const raw = config();
    expect(Object.keys(raw.env)).toEqual(["staging", "production"]);
    expect(configProblems(raw)).toEqual([]);
    expect(readFileSync(CONFIG_PATH, "utf8")).not.toMatch(/database_id|^id\s*=/m);
  });

  it("holds each environment's per-minute key limiter to the limit the code reports (@current, Retry-After)", () => {
    const raw = config();
    for (const target of [raw, ...Object.values(raw.env)]) {
      const limiter = target.ratelimits.find((binding) => binding.name === "API_KEY_MINUTE_LIMITER") as unknown as {
        simple: { limit: number; period: number };
      };
      expect(limiter.simple).toEqual({ limit: MINUTE_LIMIT, period: MINUTE_MS / 1000 });
    }
  });

  it("fails a target keeping Workers Logs' invocation logs, which record request URLs", () => {
    type Observability = { enabled?: boolean; logs?: { enabled?: boolean; invocation_logs?: boolean } };
    const raw = config() as Config & { observability: Observability };
    delete raw.observability.logs;
    expect(configProblems(raw)).toEqual(
      ["the top level", "env.staging", "env.production"].map(
        (name) =>
          `${name} keeps invocation logs (request URLs carry tokens): set observability.logs.invocation_logs = false`,
      ),
    );
    // Turned on by its logs alone, as wrangler also takes it.
    raw.observability = { logs: { enabled: true } };
    expect(configProblems(raw)).toEqual(
      ["the top level", "env.staging", "env.production"].map(
        (name) =>
          `${name} keeps invocation logs (request URLs carry tokens): set observability.logs.invocation_logs = false`,
      ),
    );
  });

  it("fails a secret in vars, and a local-only var, without asking the other targets for them", () => {
    const raw = config();
    raw.vars.SECRETS_ENCRYPTION_KEY = "c2VjcmV0LWtleS1pbi1naXQtc2VjcmV0LWtleS1pbi1naXQ=";
    raw.env.production!.vars.EMAIL_TRANSPORT_TOKEN = "re_live_token";
    raw.env.staging!.vars.EXPOSE_D1_COST = "1";
    raw.vars.WEBHOOKS_ALLOW_INSECURE = "1";
    const secretIn = (name: string, secret: string) =>
      `${name} has the secret ${secret} in its vars: \`wrangler secret put ${secret}\` instead`;
    expect(configProblems(raw)).toEqual([
      secretIn("the top level", "SECRETS_ENCRYPTION_KEY"),
      "the top level sets WEBHOOKS_ALLOW_INSECURE, which is for local runs only (.dev.vars): remove it",
      "env.staging sets EXPOSE_D1_COST, which is for local runs only (.dev.vars): remove it",
      secretIn("env.production", "EMAIL_TRANSPORT_TOKEN"),
    ]);
  });

  it("fails a zero-filled id, wherever it is", () => {
    const raw = config();
    raw.d1_databases[0]!.database_id = "00000000-0000-0000-0000-000000000000";
    raw.env.production!.kv_namespaces[0]!.id = "00000000000000000000000000000000";
    expect(configProblems(raw)).toEqual([
      'd1_databases[0].database_id is a placeholder id ("00000000-0000-0000-0000-000000000000"): ' +
        "remove it, deploying creates the resource",
      'env.production.kv_namespaces[0].id is a placeholder id ("00000000000000000000000000000000"): ' +
        "remove it, deploying creates the resource",
    ]);
  });

  it("fails an environment without a binding or var of the top level, since none is inherited", () => {
    const raw = config();
    delete raw.env.staging!.durable_objects;
    delete raw.env.staging!.vars.CORS_ORIGINS;
    expect(configProblems(raw)).toEqual([
      "env.staging lacks API_KEY_HOUR_COUNTER (environments inherit no bindings or vars)",
      "env.staging lacks CORS_ORIGINS (environments inherit no bindings or vars)",
    ]);
  });

  it("fails environments sharing a database or rate-limit counters", () => {
    const raw = config();
    raw.env.staging!.d1_databases[0]!.database_name = raw.env.production!.d1_databases[0]!.database_name!;
    raw.env.staging!.ratelimits[0]!.namespace_id = raw.ratelimits[0]!.namespace_id!;
    expect(configProblems(raw)).toEqual([
      "rate-limit namespace_id 1001 is shared by the top level and env.staging",
      "D1 database posthog-org-api-production is shared by env.staging and env.production",
    ]);
  });

  it("fails an environment without the top level's R2 buckets or queue consumers", () => {
    const raw = config();
    delete raw.env.staging!.r2_buckets;
    raw.env.production!.queues.consumers = raw.env.production!.queues.consumers!.filter(
      (consumer) => consumer.queue !== "invite-emails-dead-letters-production",
    );
    expect(configProblems(raw)).toEqual([
      "env.staging lacks ACTIVITY_LOG_EXPORTS (environments inherit no bindings or vars)",
      "env.staging lacks ACTIVITY_LOG_ARCHIVE (environments inherit no bindings or vars)",
      "env.production does not consume invite-emails-dead-letters (environments inherit no consumers)",
    ]);
  });

  it("fails environments sharing an R2 bucket or a consumed queue", () => {
    const raw = config();
    raw.env.staging!.r2_buckets![1]!.bucket_name = raw.env.production!.r2_buckets![1]!.bucket_name!;
    raw.env.staging!.queues.consumers![0]!.dead_letter_queue = raw.queues.consumers![0]!.dead_letter_queue!;
    expect(configProblems(raw)).toEqual([
      "queue webhook-deliveries-dead-letters is shared by the top level and env.staging",
      "R2 bucket activity-log-archive-production is shared by env.staging and env.production",
    ]);
  });
});
