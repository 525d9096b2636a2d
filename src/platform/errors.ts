import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "@hono/zod-openapi";
import { sql, type SQL } from "drizzle-orm";
import { isEntryProjectMoved, isForeignKeyViolation, isValueTooBig, type Database } from "./db";
import type { AppEnv } from "./env";

/** PostHog's error body: `{type, code, detail, attr}`, the first error only. */
export const ErrorBody = z
  .object({
    type: z.string(),
    code: z.string(),
    detail: z.string(),
    attr: z.string().nullable(),
  })
  .openapi("Error");
export type ErrorBody = z.infer<typeof ErrorBody>;

const typeByStatus: Record<number, string> = {
  400: "validation_error",
  401: "authentication_error",
  403: "authentication_error",
  404: "invalid_request",
  405: "invalid_request",
  409: "conflict",
  413: "invalid_request",
  415: "invalid_request",
  429: "throttled_error",
  500: "server_error",
};

/** The one way a request fails: thrown anywhere, turned into PostHog's body by `onError`. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    detail: string,
    attr: string | null = null,
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = status;
    this.body = { type: typeByStatus[status] ?? "invalid_request", code, detail, attr };
    this.headers = headers;
  }
}

export const validationError = (code: string, detail: string, attr: string | null = null) =>
  new ApiError(400, code, detail, attr);
export const parseError = (detail: string) => new ApiError(400, "parse_error", detail);
/** RFC 9110 asks a 401 to say how to authenticate; HTTP clients and tools read it. */
const BEARER_CHALLENGE = { "WWW-Authenticate": 'Bearer realm="api"' };
export const notAuthenticated = () =>
  new ApiError(401, "not_authenticated", "Authentication credentials were not provided.", null, BEARER_CHALLENGE);
export const authenticationFailed = () =>
  new ApiError(401, "authentication_failed", "Personal API key is invalid.", null, BEARER_CHALLENGE);
/** A key that exists but is past its `expires_at` (or a rolled-over value past its overlap): its own code. */
export const apiKeyExpired = () =>
  new ApiError(401, "api_key_expired", "Personal API key has expired.", null, BEARER_CHALLENGE);
/** DRF's answer to a body it has no parser for. */
export const unsupportedMediaType = (mediaType: string) =>
  new ApiError(415, "unsupported_media_type", `Unsupported media type "${mediaType}" in request.`);
export const permissionDenied = (detail: string) => new ApiError(403, "permission_denied", detail);
export const insufficientLevel = () => permissionDenied("Your organization access level is insufficient.");
export const notFound = () => new ApiError(404, "not_found", "Not found.");
export const conflict = (detail: string) => new ApiError(409, "conflict", detail);
/** A guarded write (see `unchangedSinceRead`) lost to a concurrent one. */
export const changedMeanwhile = (what: string) =>
  conflict(`The ${what} was changed by another request meanwhile. Try again.`);

/**
 * Why a write guarded on its row as read matched nothing: 404 when the row is gone meanwhile
 * (`stillThere`, an `exists` on it, is false), as a moment later; else 409. Read only on that path.
 */
export const changedOrGone = (db: Database, stillThere: SQL, what: string): Promise<ApiError> =>
  goneOr(db, stillThere, () => changedMeanwhile(what));

/** `refusal` while the row is still there (`stillThere`), else 404, as a moment later. Read only on that path. */
export async function goneOr(db: Database, stillThere: SQL, refusal: () => ApiError): Promise<ApiError> {
  const row = await db.get<{ there: number }>(sql`select ${stillThere} as "there"`);
  return row?.there ? refusal() : notFound();
}
export const throttled = (retryAfterSeconds: number) =>
  new ApiError(429, "throttled", `Request was throttled. Expected available in ${retryAfterSeconds} seconds.`, null, {
    "Retry-After": String(retryAfterSeconds),
  });

export function methodNotAllowed(method: string, allow: string[]) {
  return new ApiError(405, "method_not_allowed", `Method "${method}" not allowed.`, null, {
    Allow: allow.join(", "),
  });
}

export function errorResponse(c: Context, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(error.body, error.status);
}

export function onError(error: Error, c: Context<AppEnv>) {
  if (error instanceof ApiError) return errorResponse(c, error);
  if (error instanceof HTTPException && error.status === 400) {
    return errorResponse(c, parseError(`JSON parse error - ${error.message}`));
  }
  if (error instanceof HTTPException && error.status === 415) {
    return errorResponse(c, unsupportedMediaType((c.req.header("Content-Type") ?? "").split(";")[0]!.trim()));
  }
  // What the request names was deleted between its checks and its write: gone, as it now is.
  if (isForeignKeyViolation(error)) return errorResponse(c, notFound());
  // The project the write's entry names moved to another organization meanwhile (`organizationHeld`).
  if (isEntryProjectMoved(error)) return errorResponse(c, changedMeanwhile("project"));
  if (isValueTooBig(error)) {
    return errorResponse(
      c,
      validationError("max_length", "A value sent is larger, once stored, than the database holds."),
    );
  }
  // The request's log line carries the stack (see request-log.ts); the caller never sees it.
  return errorResponse(c, new ApiError(500, "error", "A server error occurred."));
}

type Issue = z.core.$ZodIssue;

/** DRF's wording for the first Zod issue, so that validation reads like PostHog's. */
function describeIssue(issue: Issue, input: unknown): { code: string; detail: string } {
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return { code: "required", detail: "This field is required." };
      if (input === null) return { code: "null", detail: "This field may not be null." };
      return { code: "invalid_input", detail: `Expected ${issue.expected}, received ${jsonType(input)}.` };
    case "too_big":
      if (issue.origin === "string") {
        return {
          code: "max_length",
          detail: `Ensure this field has no more than ${issue.maximum} characters.`,
        };
      }
      if (issue.origin === "array") {
        return { code: "max_length", detail: `Ensure this field has no more than ${issue.maximum} elements.` };
      }
      return { code: "max_value", detail: `Ensure this value is less than or equal to ${issue.maximum}.` };
    case "too_small":
      if (issue.origin === "string") {
        return issue.minimum === 1
          ? { code: "blank", detail: "This field may not be blank." }
          : { code: "min_length", detail: `Ensure this field has at least ${issue.minimum} characters.` };
      }
      if (issue.origin === "array") {
        return { code: "min_length", detail: `Ensure this field has at least ${issue.minimum} elements.` };
      }
      return { code: "min_value", detail: `Ensure this value is greater than or equal to ${issue.minimum}.` };
    case "invalid_value":
    case "invalid_union":
      // A missing enumeration is missing, not a wrong choice.
      if (input === undefined) return { code: "required", detail: "This field is required." };
      return { code: "invalid_choice", detail: `${quoteChoice(input)} is not a valid choice.` };
    case "invalid_format":
      if (issue.format === "email") return { code: "invalid_input", detail: "Enter a valid email address." };
      return { code: "invalid_input", detail: issue.message };
    case "custom": {
      const code = typeof issue.params?.code === "string" ? issue.params.code : "invalid_input";
      return { code, detail: issue.message };
    }
    default:
      return { code: "invalid_input", detail: issue.message };
  }
}

/** Only a scalar is echoed: a list or object is named by its type, however large or deep it is. */
function quoteChoice(input: unknown) {
  return input !== null && typeof input === "object" ? `A ${jsonType(input)}` : `"${String(input)}"`;
}

function jsonType(value: unknown) {
  if (Array.isArray(value)) return "list";
  if (value === null) return "null";
  return typeof value === "object" ? "dictionary" : typeof value;
}

/** The value an issue is about: Zod 4 leaves `input` off issues unless asked. */
function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let value = data;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Zod's result for a request part (`data` is what was sent), as the first error in PostHog's body. */
export function validationErrorFromZod(issues: readonly Issue[], data: unknown): ApiError {
  const [issue] = issues;
  if (!issue) return validationError("invalid_input", "Invalid input.");
  const input = valueAt(data, issue.path);
  if (issue.path.length === 0 && issue.code === "invalid_type") {
    return parseError(
      `Invalid data. Expected a ${issue.expected === "array" ? "list" : "dictionary"}, but got ${jsonType(input)}.`,
    );
  }
  const { code, detail } = describeIssue(issue, input);
  const attr = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
  return validationError(code, detail, attr);
}
