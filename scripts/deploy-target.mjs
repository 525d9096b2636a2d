// What wrangler.toml says of a deployment target, the top level or an [env.*], read by
// wrangler's own reader so that what an environment inherits is what wrangler deploys.
import path from "node:path";
import { root } from "./wrangler.mjs";

/** `{ workerName, publicBaseUrl }` of `environment` (undefined or "": the top level). */
export async function readTarget(environment) {
  // Imported when needed: wrangler's module takes a couple of seconds to load.
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: path.join(root, "wrangler.toml"), env: environment || undefined }, { hideWarnings: true });
  const publicBaseUrl = (config.vars.PUBLIC_BASE_URL ?? "").replace(/\/+$/, "");
  return { workerName: config.name, publicBaseUrl: publicBaseUrl || undefined };
}
