import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { validationErrorFromZod } from "./errors";

/** Every router validates the same way: the first Zod issue, in PostHog's error body. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    strict: false,
    defaultHook: (result) => {
      // @hono/zod-validator passes the value it validated as `data`, left untyped on failures.
      if (!result.success) throw validationErrorFromZod(result.error.issues, (result as { data?: unknown }).data);
    },
  });
}

export type Router = ReturnType<typeof createRouter>;
