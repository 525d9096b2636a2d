import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";
import { ApiError, parseError } from "./errors";

export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Reads and parses a JSON body once, for every route: over 1 MiB is 413, a body that is not JSON
 * is 400 `parse_error`, and an empty body counts as `{}` (as DRF treats it), so that each route's
 * Zod schema always runs and applies its defaults.
 */
export const parseJsonBody = createMiddleware<AppEnv>(async (c, next) => {
  if (!["POST", "PUT", "PATCH"].includes(c.req.method)) return next();
  const declaredLength = Number(c.req.header("Content-Length") ?? "0");
  if (declaredLength > MAX_BODY_BYTES) throw payloadTooLarge();
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > MAX_BODY_BYTES) throw payloadTooLarge();
  const text = new TextDecoder().decode(bytes);

  let body: unknown = {};
  if (text.trim() !== "") {
    const mediaType = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim();
    if (!JSON_MEDIA_TYPE.test(mediaType)) {
      throw parseError(`Unsupported media type "${mediaType}" in request. Send application/json.`);
    }
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw parseError(`JSON parse error - ${(error as Error).message}`);
    }
  }
  // Hono's validators read the body through this cache.
  c.req.bodyCache.json = Promise.resolve(body);
  await next();
});

const payloadTooLarge = () => new ApiError(413, "payload_too_large", "Request body is too large (over 1 MiB).");
