// What wrangler.toml says of a deployment target, the top level or an [env.*], read by
// wrangler's own reader so that what an environment inherits is what wrangler deploys.
import path from "node:path";
import { root } from "./wrangler.mjs";

/**
 * `{ workerName, publicBaseUrl, queuesOnlyConsumed }` of `environment` (undefined or "": the top
 * level). `queuesOnlyConsumed`: the queues no producer binds (the dead-letter queues), which
 * `wrangler deploy` does not create.
 */
export async function readTarget(environment) {
  // Imported when needed: wrangler's module takes a couple of seconds to load.
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig(
    { config: path.join(root, "wrangler.toml"), env: environment || undefined },
    { hideWarnings: true },
  );
  const publicBaseUrl = (config.vars.PUBLIC_BASE_URL ?? "").replace(/\/+$/, "");
  const produced = new Set(config.queues.producers?.map((producer) => producer.queue));
  const consumed = (config.queues.consumers ?? []).flatMap((consumer) => [consumer.queue, consumer.dead_letter_queue]);
  const queuesOnlyConsumed = [...new Set(consumed)].filter((queue) => queue && !produced.has(queue));
  return { workerName: config.name, publicBaseUrl: publicBaseUrl || undefined, queuesOnlyConsumed };
}

/**
 * The address clients use: `PUBLIC_BASE_URL` when the target sets one, else the URL wrangler
 * deployed to, else the form of a workers.dev address (whose subdomain is the account's).
 */
export function publicAddress({ workerName, publicBaseUrl }, deployedUrl) {
  return publicBaseUrl ?? deployedUrl ?? `https://${workerName}.<your workers.dev subdomain>.workers.dev`;
}
