import { z } from "@hono/zod-openapi";
import type { domains } from "../../db/schema";
import { Timestamp } from "../../platform/timestamps";

/**
 * PostHog's DOMAIN_REGEX: labels of letters, digits and inner hyphens, then a TLD of 2+ letters.
 * ASCII in either case, checked before lower-casing, which turns a few other letters (the Kelvin
 * sign) into ASCII ones.
 */
const DOMAIN_PATTERN = /^([a-zA-Z0-9]+(-[a-zA-Z0-9]+)*\.)+[a-zA-Z]{2,}$/;

const SSO_ENFORCEMENTS = ["", "google-oauth2", "github", "gitlab", "saml"] as const;

/** The settings a domain accepts on create and update; lengths as PostHog's model. */
const DomainSettingsInput = z.object({
  jit_provisioning_enabled: z.boolean().optional().openapi({ description: "Only once the domain is verified." }),
  sso_enforcement: z
    .enum(SSO_ENFORCEMENTS)
    .optional()
    .openapi({ description: "Only once the domain is verified; `saml` only when `has_saml`." }),
  saml_entity_id: z.string().max(512).nullable().optional(),
  saml_acs_url: z.string().max(512).nullable().optional(),
  // PostHog leaves the certificate unbounded; a PEM chain fits well within this.
  saml_x509_cert: z.string().max(16384).nullable().optional(),
});

export const DomainCreateInput = DomainSettingsInput.extend({
  domain: z
    .string()
    .trim()
    .max(128)
    .regex(DOMAIN_PATTERN, "Please enter a valid domain or subdomain name.")
    .toLowerCase()
    .openapi({
      description: "A host name, stored lower-cased; unique across organizations; immutable.",
      example: "example.com",
    }),
}).openapi("OrganizationDomainInput");
export type DomainCreateInput = z.infer<typeof DomainCreateInput>;

/** `domain` is immutable after creation: a PATCH of it is ignored (the schema drops it). */
export const DomainUpdateInput = DomainSettingsInput.openapi("OrganizationDomainUpdate");
/**
 * PUT: PostHog's full update, where `domain` is required; the domain itself never changes (the
 * value sent is not applied, as on PATCH), and fields left out are kept, as Django REST framework does.
 */
export const DomainFullInput = DomainSettingsInput.extend({ domain: z.string().max(128) }).openapi(
  "OrganizationDomainFullUpdate",
);
export type DomainSettingsInput = z.infer<typeof DomainSettingsInput>;

export const Domain = z
  .object({
    id: z.string().uuid(),
    domain: z.string(),
    is_verified: z.boolean(),
    verified_at: Timestamp.nullable(),
    verification_challenge: z.string().openapi({
      description: "Publish it as a TXT record of `_posthog-challenge.<domain>`, then call verify.",
    }),
    last_verification_retry: z.string().nullable().openapi({ description: "When verification last failed." }),
    jit_provisioning_enabled: z.boolean(),
    sso_enforcement: z.enum(SSO_ENFORCEMENTS),
    has_saml: z.boolean(),
    saml_entity_id: z.string().nullable(),
    saml_acs_url: z.string().nullable(),
    saml_x509_cert: z.string().nullable(),
    scim_base_url: z.string().nullable().openapi({ description: "Always null: no SCIM provisioning here." }),
  })
  .openapi("OrganizationDomain");
export type Domain = z.infer<typeof Domain>;

export type DomainRow = typeof domains.$inferSelect;

type SamlFields = Pick<DomainRow, "samlEntityId" | "samlAcsUrl" | "samlX509Cert">;
export const hasSaml = (row: SamlFields) => Boolean(row.samlEntityId && row.samlAcsUrl && row.samlX509Cert);

export function toDomain(row: DomainRow): Domain {
  return {
    id: row.id,
    domain: row.domain,
    is_verified: row.verifiedAt !== null,
    verified_at: row.verifiedAt,
    verification_challenge: row.verificationChallenge,
    last_verification_retry: row.lastVerificationRetry,
    jit_provisioning_enabled: row.jitProvisioningEnabled,
    sso_enforcement: row.ssoEnforcement as Domain["sso_enforcement"],
    has_saml: hasSaml(row),
    saml_entity_id: row.samlEntityId,
    saml_acs_url: row.samlAcsUrl,
    saml_x509_cert: row.samlX509Cert,
    scim_base_url: null,
  };
}
