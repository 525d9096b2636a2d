import { visibleName } from "../platform/names";
import { z } from "@hono/zod-openapi";
import { CreatedPersonalApiKey } from "../personal-api-keys/personal-api-keys.routes";
import { noStore } from "../platform/response-headers";
import {
  addressThrottled,
  changedMeanwhileResponse,
  errorResponses,
  jsonBody,
  jsonResponse,
  publicRoute,
} from "../platform/route";
import { MembershipLevelField } from "../organizations/membership-level-field";
import { UserBasic } from "../platform/user-basic";

const SignupParams = z.object({
  token: z.string().openapi({
    description:
      "The invite's acceptance token (`phi_...`), from the invite e-mail or its creator; not the invite's id.",
  }),
});

const InvitePreview = z
  .object({
    id: z.string().uuid(),
    target_email: z.string().openapi({ description: "Masked: `j***@example.com`." }),
    first_name: z.string(),
    organization_name: z.string(),
    level: MembershipLevelField,
  })
  .openapi("InvitePreview");

export const SignupInput = z
  .object({
    first_name: visibleName(z.string().trim().max(150))
      .optional()
      .openapi({ description: "New users only; defaults to the invite's." }),
    last_name: visibleName(z.string().trim().max(150)).optional().openapi({ description: "New users only." }),
  })
  .openapi("SignupInput");
export type SignupInput = z.infer<typeof SignupInput>;

const SignupWithTokenInput = SignupInput.extend({
  token: z
    .string()
    .max(200)
    .openapi({ description: "The invite's acceptance token (`phi_...`), from the invite e-mail or its creator." }),
}).openapi("SignupWithTokenInput");

const SignupResult = z
  .object({
    user: UserBasic,
    organization_id: z.string().uuid(),
    personal_api_key: CreatedPersonalApiKey.optional().openapi({
      description: "New users only: their first key (scopes `*`), its value shown here once.",
    }),
  })
  .openapi("SignupResult");

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
