// Writes docs/endpoints.md from the OpenAPI document, built by the same code that serves
// `/api/schema` (src/openapi.ts), so that the per-endpoint reference cannot drift from
// the routes. `npm run docs:endpoints`; test/platform/endpoint-reference.test.ts fails while the
// file is stale. The TypeScript is bundled with esbuild (wrangler's own bundler, always installed
// with it); the one `cloudflare:workers` import (a Durable Object's base class, never run here)
// is stood in for by an empty class.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { renderEndpointReference } from "./endpoint-reference.mjs";
import { root } from "./wrangler.mjs";

const workersRuntime = {
  name: "workers-runtime",
  setup(build) {
    build.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "workers-runtime" }));
    build.onLoad({ filter: /.*/, namespace: "workers-runtime" }, () => ({
      contents: "export class DurableObject {}",
      loader: "js",
    }));
  },
};

const bundled = await build({
  stdin: {
    contents: [
      'import { createApp } from "./src/app";',
      'import { buildDocument } from "./src/openapi";',
      "export const document = buildDocument(createApp());",
    ].join("\n"),
    resolveDir: root,
    loader: "ts",
  },
  bundle: true,
  write: false,
  format: "esm",
  platform: "neutral",
  // Node's own modules the Worker uses under its compatibility flags (`node:async_hooks`): Node has them.
  external: ["node:*"],
  mainFields: ["module", "main"],
  plugins: [workersRuntime],
  logLevel: "warning",
});
const source = bundled.outputFiles[0].text;
const { document } = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);
const target = path.join(root, "docs/endpoints.md");
writeFileSync(target, renderEndpointReference(document));
console.log(`wrote ${path.relative(root, target)}`);
