// Imported first by the scripts npm runs (and run first by `npm test`): stops with a clear message
// where Node is too old, instead of wrangler's or a TypeScript import's error further on; and
// puts Swagger UI into public/docs/vendor when npm's postinstall did not (`--ignore-scripts`).
//
// Node: wrangler needs 22; the scripts import the Worker's TypeScript modules, which Node runs
// as they are from 22.18 (and 23.6) on. npm scripts normally run on the Node 24 that the `node`
// dev dependency installs, whatever the machine has; its install script is what fetches it.
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const supported = major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);

if (!supported) {
  console.error(`This is Node ${process.versions.node}; this project's scripts need Node 22.18 or later.
npm scripts run on the Node 24 of the \`node\` dev dependency once its install script has run;
after \`npm ci --ignore-scripts\` it has not: run \`npm rebuild node\`, or install Node 22.18+.`);
  process.exit(1);
}

const root = fileURLToPath(new URL("..", import.meta.url));
if (!existsSync(path.join(root, "public", "docs", "vendor", "swagger-ui-bundle.js"))) {
  await import("./copy-docs-assets.mjs");
  console.log("Copied Swagger UI into public/docs/vendor (npm's postinstall had not run).");
}
