import { noStore } from "../platform/response-headers";
import {
  addressThrottled,
  changedMeanwhileResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
  publicRoute,
} from "../platform/route";
import { InvitePreview, SignupInput, SignupParams, SignupResult, SignupWithTokenInput } from "./signup.schema";

export const previewInvite = publicRoute({
  method: "get",
  // Keyed by the invite's token, which is a secret: no cache keeps it.
  middleware: [noStore],
  path: "/api/signup/{token}",
  tags: ["signup"],
  summary: "Preview an invite (no key): masked e-mail, first name, organization name",
  description:
    "What the accept page shows before joining; an unknown or used token answers 404, an expired one 400 `expired`.",
  request: { params: SignupParams },
  responses: {
    200: jsonResponse(InvitePreview, "The invite"),
    400: errorResponses[400],
    404: errorResponses[404],
    429: addressThrottled,
  },
});

const ACCEPT_SUMMARY =
  "Join by invite: without a key, as a new user who receives a first API key; " +
  "with a key (scope organization_member:write), as the existing user the invite names";

export const acceptInviteByBody = publicRoute({
  method: "post",
  middleware: [noStore],
  path: "/api/signup",
  // The path form keeps PostHog's `signup_create`.
  operationId: "signup_with_token_create",
  tags: ["signup"],
  summary: ACCEPT_SUMMARY,
  description: "The token travels in the body, where access logs and proxies do not record it.",
  request: { body: jsonBody(SignupWithTokenInput) },
  responses: {
    201: jsonResponse(SignupResult, "The user and the organization joined"),
    ...errorResponses,
    409: changedMeanwhileResponse,
  },
});

export const acceptInvite = publicRoute({
  method: "post",
  middleware: [noStore],
  path: "/api/signup/{token}",
  tags: ["signup"],
  summary: ACCEPT_SUMMARY,
  description:
    "Kept for clients that put the token in the path, where access logs may record it: prefer `POST /api/signup`.",
  request: { params: SignupParams, body: jsonBody(SignupInput) },
  responses: {
    201: jsonResponse(SignupResult, "The user and the organization joined"),
    ...errorResponses,
    409: changedMeanwhileResponse,
  },
});
