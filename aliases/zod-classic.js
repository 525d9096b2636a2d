// zod's classic API (node_modules/zod/v4/classic/external.js) for the Worker bundle, without
// `export * as locales`, the schema compiler and `fromJSONSchema` (none of them used here), and with
// `core` from ./zod-core.js (the same cuts).
// Keep in step with that file when upgrading zod.
export * as core from "./zod-core.js";
export * from "../node_modules/zod/v4/classic/schemas.js";
export * from "../node_modules/zod/v4/classic/checks.js";
export * from "../node_modules/zod/v4/classic/errors.js";
export * from "../node_modules/zod/v4/classic/parse.js";
export * from "../node_modules/zod/v4/classic/compat.js";
export {
  globalRegistry,
  registry,
  config,
  memoizer,
  $output,
  $input,
  $brand,
  clone,
  regexes,
  treeifyError,
  prettifyError,
  formatError,
  flattenError,
  TimePrecision,
  util,
  NEVER,
  INVALID,
  toZod,
  getDiscriminatedOption,
} from "./zod-core.js";
export { toJSONSchema } from "../node_modules/zod/v4/core/json-schema-processors.js";
export { deepPartial } from "../node_modules/zod/v4/classic/deep-partial.js";
export { input, output } from "../node_modules/zod/v4/classic/in-out.js";
export { ZodISODateTime, ZodISODate, ZodISOTime, ZodISODuration } from "../node_modules/zod/v4/classic/iso.js";
export * as iso from "../node_modules/zod/v4/classic/iso.js";
export * as coerce from "../node_modules/zod/v4/classic/coerce.js";
