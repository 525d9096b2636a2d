#!/usr/bin/env node
// Checks of wrangler.toml that need no Cloudflare account (part of `npm test`):
//   - no placeholder ids (zero-filled, as templates ship them): `wrangler deploy` creates the
//     resources and later finds them by name, so an id in the config is a real one or none;
//   - every environment declares the bindings and vars the top level does: wrangler inherits none
//     of them, and the code is typed by the top level's;
//   - every environment consumes the queues the top level does;
//   - no two environments share a D1 database, a queue, an R2 bucket or a rate-limit namespace;
//   - no target declares a secret in its vars (committed, and shown in the dashboard) nor a var
//     for local runs only (`npm start` puts those in .dev.vars);
//   - Workers Logs keeps no invocation logs: they record each request's URL, where share tokens,
//     invite tokens, one-time codes and query-string keys travel;
//   - worker-configuration.d.ts is what `npm run types` writes from the config as it is.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { root } from "./wrangler.mjs";

const PLACEHOLDER = /^[0-]*$/;

/** Set with `wrangler secret put` (docs/deploy.md), never in `[vars]`. */
const SECRETS = ["SECRETS_ENCRYPTION_KEY", "SECRETS_ENCRYPTION_OLD_KEYS", "EMAIL_TRANSPORT_TOKEN"];
/** For local development and tests only: deployed, they would open private receivers or count hidden rows. */
const LOCAL_ONLY_VARS = ["WEBHOOKS_ALLOW_INSECURE", "EXPOSE_D1_COST"];

/** The names of `target`'s vars that are secrets or for local runs only, each as a problem. */
function forbiddenVars(target, name) {
  return Object.keys(target.vars ?? {}).flatMap((variable) => {
    if (SECRETS.includes(variable))
      return [`${name} has the secret ${variable} in its vars: \`wrangler secret put ${variable}\` instead`];
    if (LOCAL_ONLY_VARS.includes(variable))
      return [`${name} sets ${variable}, which is for local runs only (.dev.vars): remove it`];
    return [];
  });
}

/** Every `…id` field holding a placeholder, wherever it is in the config. */
function placeholderIds(value, where) {
  if (Array.isArray(value)) return value.flatMap((item, index) => placeholderIds(item, `${where}[${index}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, field]) => {
    const at = where ? `${where}.${key}` : key;
    if (/(^|_)id$/.test(key) && typeof field === "string" && PLACEHOLDER.test(field))
      return [`${at} is a placeholder id ("${field}"): remove it, deploying creates the resource`];
    return placeholderIds(field, at);
  });
}

/** The names the Worker sees in `env`, as one target (the top level or an environment) declares them. */
function bindingNames(target) {
  return new Set([
    ...(target.d1_databases ?? []).map((database) => database.binding),
    ...(target.kv_namespaces ?? []).map((namespace) => namespace.binding),
    ...(target.queues?.producers ?? []).map((producer) => producer.binding),
    ...(target.r2_buckets ?? []).map((bucket) => bucket.binding),
    ...(target.durable_objects?.bindings ?? []).map((object) => object.name),
    ...(target.ratelimits ?? []).map((limiter) => limiter.name),
    // Secrets and local-only vars are reported on their own (forbiddenVars), not asked for elsewhere.
    ...Object.keys(target.vars ?? {}).filter((name) => !SECRETS.includes(name) && !LOCAL_ONLY_VARS.includes(name)),
  ]);
}

/**
 * The top level's consumed queues that `target` does not consume, by name less the environment's
 * suffix (`-staging`): an environment without one of them queues webhooks and e-mails it never
 * sends.
 */
function queuesNotConsumed(target, environment, topLevelQueues) {
  const consumed = (target.queues?.consumers ?? []).map((consumer) =>
    environment ? consumer.queue.replace(new RegExp(`-${environment}$`), "") : consumer.queue,
  );
  return topLevelQueues.filter((queue) => !consumed.includes(queue));
}

/** The account-wide resources a target uses, each as "kind name". */
function resources(target) {
  return [
    ...(target.d1_databases ?? []).map((database) => `D1 database ${database.database_name}`),
    ...(target.queues?.producers ?? []).map((producer) => `queue ${producer.queue}`),
    ...(target.queues?.consumers ?? []).flatMap((consumer) =>
      [consumer.queue, consumer.dead_letter_queue].filter(Boolean).map((queue) => `queue ${queue}`),
    ),
    ...(target.r2_buckets ?? []).map((bucket) => `R2 bucket ${bucket.bucket_name}`),
    ...(target.ratelimits ?? []).map((limiter) => `rate-limit namespace_id ${limiter.namespace_id}`),
  ];
}

/** Whether Workers Logs would keep `target`'s invocation logs (an environment inherits `observability`). */
function keepsInvocationLogs(target, topLevel) {
  const observability = target.observability ?? topLevel.observability;
  // Workers Logs is on with `observability.enabled`, or with `observability.logs.enabled` alone.
  const logsOn = observability?.enabled === true || observability?.logs?.enabled === true;
  return logsOn && observability.logs?.invocation_logs !== false;
}

/** What is wrong with a raw wrangler config (the object wrangler reads from the file); [] if nothing. */
export function configProblems(config) {
  const targets = [
    ["the top level", config, ""],
    ...Object.entries(config.env ?? {}).map(([name, target]) => [`env.${name}`, target, name]),
  ];
  const expected = bindingNames(config);
  const consumers = (config.queues?.consumers ?? []).map((consumer) => consumer.queue);
  const problems = placeholderIds(config, "");
  const users = new Map();
  for (const [name, target, environment] of targets) {
    problems.push(...forbiddenVars(target, name));
    const declared = bindingNames(target);
    for (const binding of expected)
      if (!declared.has(binding)) problems.push(`${name} lacks ${binding} (environments inherit no bindings or vars)`);
    for (const binding of declared)
      if (!expected.has(binding))
        problems.push(
          `${name} declares ${binding}, which the top level does not (the code is typed by the top level's)`,
        );
    if (keepsInvocationLogs(target, config))
      problems.push(
        `${name} keeps invocation logs (request URLs carry tokens): set observability.logs.invocation_logs = false`,
      );
    for (const queue of queuesNotConsumed(target, environment, consumers))
      problems.push(`${name} does not consume ${queue} (environments inherit no consumers)`);
    for (const resource of new Set(resources(target))) users.set(resource, [...(users.get(resource) ?? []), name]);
  }
  for (const [resource, names] of users)
    if (names.length > 1) problems.push(`${resource} is shared by ${names.join(" and ")}`);
  return problems;
}

function typesAreCurrent() {
  const result = spawnSync("npm", ["run", "--silent", "types", "--", "--check"], { cwd: root, encoding: "utf8" });
  if (result.status === 0) return [];
  return [
    `worker-configuration.d.ts is out of date: run \`npm run types\` and commit it\n${result.stdout}${result.stderr}`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { experimental_readRawConfig } = await import("wrangler");
  const { rawConfig } = experimental_readRawConfig({ config: path.join(root, "wrangler.toml") });
  const problems = [...configProblems(rawConfig), ...typesAreCurrent()];
  for (const problem of problems) console.error(`wrangler.toml: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
  else
    console.log(
      `wrangler.toml: no placeholder ids; ${Object.keys(rawConfig.env ?? {}).length} environments each with ` +
        "the top level's bindings and resources of their own; types current.",
    );
}
