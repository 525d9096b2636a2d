import { validationError } from "../../platform/errors";
import { hasSaml, type DomainRow, type DomainSettingsInput } from "./domains.schema";

type DomainState = Pick<
  DomainRow,
  "verifiedAt" | "jitProvisioningEnabled" | "ssoEnforcement" | "samlEntityId" | "samlAcsUrl" | "samlX509Cert"
>;

/** What a domain is before anything is set: unverified, nothing enforced, no SAML. */
export const NEW_DOMAIN: DomainState = {
  verifiedAt: null,
  jitProvisioningEnabled: false,
  ssoEnforcement: "",
  samlEntityId: null,
  samlAcsUrl: null,
  samlX509Cert: null,
};

const sentOrKept = <T>(sent: T | undefined, kept: T): T => (sent === undefined ? kept : sent);

/**
 * The column values a create or update sets, once the domain rules (verification first, SAML
 * complete) hold for the domain as it will be. Sending the value a field already has is allowed on
 * an unverified domain, so that a client may send back the object it read; PostHog refuses even
 * that, and silently drops both fields on create, where we answer 400 instead of ignoring what was
 * asked.
 */
export function domainSettings(current: DomainState, input: DomainSettingsInput) {
  const next: DomainState = {
    verifiedAt: current.verifiedAt,
    jitProvisioningEnabled: sentOrKept(input.jit_provisioning_enabled, current.jitProvisioningEnabled),
    ssoEnforcement: sentOrKept(input.sso_enforcement, current.ssoEnforcement),
    samlEntityId: sentOrKept(input.saml_entity_id, current.samlEntityId),
    samlAcsUrl: sentOrKept(input.saml_acs_url, current.samlAcsUrl),
    samlX509Cert: sentOrKept(input.saml_x509_cert, current.samlX509Cert),
  };
  if (current.verifiedAt === null) {
    if (next.jitProvisioningEnabled !== current.jitProvisioningEnabled)
      throw verificationRequired("jit_provisioning_enabled");
    if (next.ssoEnforcement !== current.ssoEnforcement) throw verificationRequired("sso_enforcement");
  }
  // Also guards clearing a SAML field while SAML is enforced, which would lock members out.
  if (next.ssoEnforcement === "saml" && !hasSaml(next)) {
    throw validationError(
      "invalid_input",
      "SAML can be enforced only once saml_entity_id, saml_acs_url and saml_x509_cert are all set.",
      "sso_enforcement",
    );
  }
  const { verifiedAt: _verifiedAt, ...settings } = next;
  return settings;
}

const verificationRequired = (attr: string) =>
  validationError("verification_required", "This attribute cannot be updated until the domain is verified.", attr);
