// The address of the local server that serves a given state folder, so that `npm run bootstrap`
// prints the port the server really listens on, whatever `npm start` was given.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { root } from "./wrangler.mjs";

/** wrangler's own default for `--persist-to`. */
const DEFAULT_STATE = ".wrangler/state";

const urlFile = (persistTo = DEFAULT_STATE) => path.resolve(root, persistTo, "local-url");

export function rememberLocalUrl(url, persistTo) {
  mkdirSync(path.dirname(urlFile(persistTo)), { recursive: true });
  writeFileSync(urlFile(persistTo), url);
}

export function forgetLocalUrl(persistTo) {
  rmSync(urlFile(persistTo), { force: true });
}

/** The running server's address; without one, where `npm start` would listen. */
export function localUrl(persistTo) {
  try {
    return readFileSync(urlFile(persistTo), "utf8").trim();
  } catch {
    return `http://127.0.0.1:${process.env.PORT ?? 8787}`;
  }
}
