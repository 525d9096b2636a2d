// Builds the Worker as `wrangler deploy` would (`--dry-run`, nothing uploaded) for the top level
// and every [env.*] of wrangler.toml, so that a configuration wrangler refuses fails here and not
// on deploy day; and fails when a bundle, gzipped, exceeds the budget. Part of `npm test`.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { environmentArgs, root, wrangler } from "./wrangler.mjs";

const BUDGET_KIB = 220;

const kib = (bytes) => (bytes / 1024).toFixed(1);

/** Builds one target; returns its summary line, and whether it is within the budget. */
function checkTarget(environment) {
  const outdir = mkdtempSync(join(tmpdir(), "bundle-size-"));
  try {
    wrangler(["deploy", "--dry-run", "--outdir", outdir, ...environmentArgs(environment)]);
    const bundle = readFileSync(join(outdir, "index.js"));
    const gzipped = gzipSync(bundle).length;
    const name = environment ? `env.${environment}` : "top level";
    return {
      ok: gzipped <= BUDGET_KIB * 1024,
      summary:
        `Worker bundle (${name}): ${kib(bundle.length)} KiB, ` +
        `gzip ${kib(gzipped)} KiB (budget ${BUDGET_KIB} KiB gzip)`,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const { experimental_readRawConfig } = await import("wrangler");
const { rawConfig } = experimental_readRawConfig({ config: join(root, "wrangler.toml") });
for (const environment of ["", ...Object.keys(rawConfig.env ?? {})]) {
  const { ok, summary } = checkTarget(environment);
  if (ok) {
    console.log(summary);
  } else {
    console.error(`${summary}: over budget.`);
    process.exitCode = 1;
  }
}
