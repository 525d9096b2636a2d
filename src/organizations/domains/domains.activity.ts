import { sql } from "drizzle-orm";
import { domains } from "../../db/schema";
import type { ReadInBatch } from "../../platform/activity-log/record";
import { resourceActivity } from "../../platform/activity-log/resource-activity";
import type { DomainRow } from "./domains.schema";

/**
 * Domains are created, updated, verified and deleted; an entry names the domain. An update
 * records the settings a PATCH changes, the SAML certificate only as changed.
 */
export const domainActivity = resourceActivity("OrganizationDomain", {
  fields: ["jit_provisioning_enabled", "sso_enforcement", "saml_entity_id", "saml_acs_url", "saml_x509_cert"],
  secretFields: ["saml_x509_cert"],
});

type DomainSettings = Pick<
  DomainRow,
  "jitProvisioningEnabled" | "ssoEnforcement" | "samlEntityId" | "samlAcsUrl" | "samlX509Cert"
>;

/** The settings a PATCH can change, as the API names them (the certificate in the clear: compared, never recorded). */
export const trackedDomainFields = (domain: DomainSettings): Record<string, unknown> => ({
  jit_provisioning_enabled: domain.jitProvisioningEnabled,
  sso_enforcement: domain.ssoEnforcement,
  saml_entity_id: domain.samlEntityId,
  saml_acs_url: domain.samlAcsUrl,
  saml_x509_cert: domain.samlX509Cert,
});

export const domainItem = (organizationId: string, id: string, domain: string | ReadInBatch) => ({
  organizationId,
  itemId: id,
  name: domain,
});

/** The domain's name, read when the entry is appended: a delete matches the domain by id without reading it. */
export const domainNameInBatch = (id: string): ReadInBatch =>
  sql`select ${domains.domain} from ${domains} where ${domains.id} = ${id}`;
