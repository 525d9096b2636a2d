import type { Context } from "hono";
import type { AppEnv } from "../../platform/env";
import { loadKeyring, seal } from "../../platform/secrets";

/** Each sealed secret is bound to its webhook: copied to another row, it does not open. */
export const secretContext = (webhookId: string) => `webhook:${webhookId}:secret`;

/** Standard Webhooks' secret form: `whsec_` and the base64 of 32 random bytes. */
function mintSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

export async function sealedNewSecret(c: Context<AppEnv>, webhookId: string) {
  const secret = mintSecret();
  return { secret, sealedSecret: await seal(await loadKeyring(c.env), secret, secretContext(webhookId)) };
}
