// `zod` and `zod/v4` for the Worker bundle (wrangler.toml [alias]): zod's entry point over
// ./zod-classic.js, so that no import of zod reaches its locales.
import * as z from "./zod-classic.js";
export * from "./zod-classic.js";
export { z, z as default };
