#!/usr/bin/env node
// `npm run docs:check`: runs every ```sh block of README.md and docs/ in reading order, as one
// shell session (variables a block sets serve the next), against a fresh local server with the
// bootstrap key in $KEY and the server in $API. Fails on any HTTP answer outside 2xx that the
// text does not announce. The convention, for whoever writes documentation:
//   - ```sh blocks run; other languages (```json, ```text, ```ts) do not.
//   - A line `# expect 404` (or `# expect 4xx`) announces the status of the next command.
//   - ```sh skip marks a block that cannot run locally (installing, deploying, DNS, Cloudflare's
//     own API); say why in the text next to it.
//   - The session's `curl` prints the body and checks the status (it adds its own `-w`): don't
//     pass `-w` to it.
import "./toolchain.mjs";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { startLocalServer } from "./local-server.mjs";
import { root } from "./wrangler.mjs";

/**
 * Reading order: README's tour first, then the pages it links to, in its order; any other page
 * of docs/ after them, so that a new page is checked without being listed here.
 */
const ORDER = [
  "README.md",
  "docs/contract.md",
  "docs/organizations.md",
  "docs/people.md",
  "docs/domains-and-batch-exports.md",
  "docs/dashboards.md",
  "docs/security.md",
  "docs/consistency.md",
  "docs/development.md",
];
const PAGES = [
  ...ORDER,
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`)
    .filter((page) => !ORDER.includes(page))
    .sort(),
];

const FENCE = /^```sh( skip)?\n([\s\S]*?)^```$/gm;
const EXPECT = /^\s*# expect (\d{3}|[2-5]xx)\s*$/;

const PRELUDE = path.join(root, "scripts", "docs-check-prelude.sh");

/** `# expect N` holds for the one command after it, continuation lines included. */
function announceExpectations(code) {
  const out = [];
  let pending = false;
  for (const line of code.split("\n")) {
    const expectation = EXPECT.exec(line);
    if (expectation) {
      out.push(`__docs_expect=${expectation[1]}`);
      pending = true;
      continue;
    }
    out.push(line);
    const continues = line.trimEnd().endsWith("\\") || line.trim() === "" || line.trim().startsWith("#");
    if (pending && !continues) {
      out.push(`__docs_expect=""`);
      pending = false;
    }
  }
  return out.join("\n");
}

function blocksOf(page) {
  const text = readFileSync(path.join(root, page), "utf8");
  return [...text.matchAll(FENCE)].map((match) => ({
    page,
    line: text.slice(0, match.index).split("\n").length,
    skip: Boolean(match[1]),
    code: match[2],
  }));
}

function sessionScript(blocks) {
  const steps = blocks
    .filter((block) => !block.skip)
    .map((block) => `echo "--- ${block.page}:${block.line}" >&2\n${announceExpectations(block.code)}`);
  return [`source ${JSON.stringify(PRELUDE)}`, ...steps].join("\n");
}

const server = await startLocalServer();
let status = 1;
try {
  const blocks = PAGES.flatMap(blocksOf);
  const run = spawnSync("bash", ["-c", sessionScript(blocks)], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, API: server.url, KEY: server.api_key },
  });
  status = run.status ?? 1;
  const ran = blocks.filter((block) => !block.skip).length;
  console.error(status === 0 ? `docs:check: ${ran} blocks ran, ${blocks.length - ran} skipped` : "docs:check failed");
} finally {
  await server.stop();
}
process.exit(status);
