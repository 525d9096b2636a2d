// Writes docs/events.md from the code's vocabulary (src/platform/activity-log/events-doc.ts), so
// that the list of events and their example payloads cannot drift from what the service sends.
// `npm run docs:events`; test/platform/activity-log/events-doc.test.ts fails while the file is stale.
// The TypeScript is bundled with esbuild (wrangler's own bundler, always installed with it).
import { writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { root } from "./wrangler.mjs";

const bundled = await build({
  entryPoints: [path.join(root, "src/platform/activity-log/events-doc.ts")],
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  // Node's own modules the Worker uses under its compatibility flags (`node:async_hooks`): Node has them.
  external: ["node:*"],
  mainFields: ["module", "main"],
  logLevel: "warning",
});
const source = bundled.outputFiles[0].text;
const { renderEventsDoc } = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const target = path.join(root, "docs/events.md");
writeFileSync(target, renderEventsDoc());
console.log(`wrote ${path.relative(root, target)}`);
