// `zod/v4/core` for the Worker bundle (wrangler.toml [alias]): node_modules/zod/v4/core/index.js
// without its `export * as locales`, which would put every language's messages in the bundle, and
// without the schema compiler (`compile`, `withParser`: compile.js), which nothing here uses.
// English stays the default: zod's classic schemas register locales/en.js themselves.
// Keep in step with that file when upgrading zod.
export * from "../node_modules/zod/v4/core/core.js";
export * from "../node_modules/zod/v4/core/parse.js";
export * from "../node_modules/zod/v4/core/errors.js";
export * from "../node_modules/zod/v4/core/schemas.js";
export * from "../node_modules/zod/v4/core/memoizer.js";
export * from "../node_modules/zod/v4/core/checks.js";
export * from "../node_modules/zod/v4/core/versions.js";
export * as util from "../node_modules/zod/v4/core/util.js";
export { toZod } from "../node_modules/zod/v4/core/util.js";
export * as regexes from "../node_modules/zod/v4/core/regexes.js";
export * from "../node_modules/zod/v4/core/registries.js";
export * from "../node_modules/zod/v4/core/doc.js";
export { INVALID } from "../node_modules/zod/v4/core/compile.js";
export * from "../node_modules/zod/v4/core/api.js";
export * from "../node_modules/zod/v4/core/to-json-schema.js";
export { toJSONSchema } from "../node_modules/zod/v4/core/json-schema-processors.js";
export { JSONSchemaGenerator } from "../node_modules/zod/v4/core/json-schema-generator.js";
export * as JSONSchema from "../node_modules/zod/v4/core/json-schema.js";
