// Fails when the Worker's bundle, gzipped, exceeds the budget: bundles it as `wrangler deploy`
// would (`--dry-run`, nothing uploaded) and gzips the result. Part of `npm test`.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { wrangler } from "./wrangler.mjs";

const BUDGET_KIB = 160;

const outdir = mkdtempSync(join(tmpdir(), "bundle-size-"));
try {
  wrangler(["deploy", "--dry-run", "--outdir", outdir], { capture: true });
  const bundle = readFileSync(join(outdir, "index.js"));
  const kib = (bytes) => (bytes / 1024).toFixed(1);
  const gzipped = gzipSync(bundle).length;
  const summary = `Worker bundle: ${kib(bundle.length)} KiB, gzip ${kib(gzipped)} KiB (budget ${BUDGET_KIB} KiB gzip)`;
  if (gzipped > BUDGET_KIB * 1024) {
    console.error(`${summary}: over budget.`);
    process.exitCode = 1;
  } else {
    console.log(summary);
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
