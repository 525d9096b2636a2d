import { expect } from "vitest";
import { errorBody } from "./harness";

/** PostHog's error bodies for the failures every resource shares. */
export const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
export const NOT_AUTHENTICATED = errorBody(
  "authentication_error",
  "not_authenticated",
  "Authentication credentials were not provided.",
);
export const AUTHENTICATION_FAILED = errorBody(
  "authentication_error",
  "authentication_failed",
  "Personal API key is invalid.",
);
export const INSUFFICIENT_LEVEL = errorBody(
  "authentication_error",
  "permission_denied",
  "Your organization access level is insufficient.",
);
/** A dashboard the caller may read but not change. */
export const NO_EDIT_RIGHT = errorBody(
  "authentication_error",
  "permission_denied",
  "You don't have edit permissions for this dashboard.",
);
/** A guarded write that lost to a concurrent one (409): the API's `changedMeanwhile(what)`. */
export const changedMeanwhile = (what: string) =>
  errorBody("conflict", "conflict", `The ${what} was changed by another request meanwhile. Try again.`);
/** A value over its size limit (`boundedJson`, or a merge in SQL past it). */
export const maxLength = (detail: string, attr: string | null = null) =>
  errorBody("validation_error", "max_length", detail, attr);
export const missingScope = (scope: string) =>
  errorBody("authentication_error", "permission_denied", `API key missing required scope '${scope}'`);

/** Status and body checked together, so that a failure shows both. */
export function expectError(response: { status: number; body: unknown }, status: number, body: unknown) {
  expect({ status: response.status, body: response.body }).toEqual({ status, body });
}

/** Creates sent at once past a limit: `created` of them answer 201, and every other one `refusal`. */
export function expectCreatedUpTo(responses: { status: number; body: unknown }[], created: number, refusal: unknown) {
  expect(responses.filter((response) => response.status === 201)).toHaveLength(created);
  for (const refused of responses.filter((response) => response.status !== 201)) expect(refused.body).toEqual(refusal);
}
