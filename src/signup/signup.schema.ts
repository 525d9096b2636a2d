import { z } from "@hono/zod-openapi";
import { MembershipLevelField } from "../organizations/membership-level-field";
import { CreatedPersonalApiKey } from "../personal-api-keys/personal-api-keys.schema";
import { visibleName } from "../platform/names";
import { UserBasic } from "../platform/user-basic";

export const SignupParams = z.object({
  token: z.string().openapi({
    description:
      "The invite's acceptance token (`phi_...`), from the invite e-mail or its creator; not the invite's id.",
  }),
});

export const InvitePreview = z
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
    claim_account: z
      .boolean()
      .optional()
      .openapi({
        description:
          "With the invite e-mail's own token and no key: take over the account that exists for the address " +
          "without its address proven (made with a token its inviter was answered). Every key it has is revoked.",
      }),
  })
  .openapi("SignupInput");
export type SignupInput = z.infer<typeof SignupInput>;

export const SignupWithTokenInput = SignupInput.extend({
  token: z
    .string()
    .max(200)
    .openapi({ description: "The invite's acceptance token (`phi_...`), from the invite e-mail or its creator." }),
}).openapi("SignupWithTokenInput");

export const SignupResult = z
  .object({
    user: UserBasic,
    organization_id: z.string().uuid(),
    personal_api_key: CreatedPersonalApiKey.optional().openapi({
      description: "New users only: their first key (scopes `*`), its value shown here once.",
    }),
  })
  .openapi("SignupResult");
