#!/usr/bin/env node
// Copies Swagger UI's standalone bundle from node_modules into the Worker's static assets, so
// that /docs is served by the Worker itself, offline, with no CDN. Run after every install.
import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { root } from "./wrangler.mjs";

const source = path.join(root, "node_modules", "swagger-ui-dist");
const target = path.join(root, "public", "docs", "vendor");
mkdirSync(target, { recursive: true });
for (const file of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
  copyFileSync(path.join(source, file), path.join(target, file));
}
