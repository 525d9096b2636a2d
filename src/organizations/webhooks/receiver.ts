import { webhooks } from "../../db/schema";
import type { Bindings } from "../../platform/env";
import { loadKeyring, unseal } from "../../platform/secrets";
import { retryAfterSeconds } from "./retry-schedule";
import { secretContext } from "./webhook-secrets";
import { deliveryRefusal, insecureReceiversAllowed } from "./webhook-urls";

const TIMEOUT_MS = 10_000;
/** What is kept of a receiver's answer, for `last_error`. */
const MAX_RESPONSE_BYTES = 64 * 1024;

type WebhookRow = typeof webhooks.$inferSelect;

function base64(bytes: ArrayBuffer): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

/**
 * Standard Webhooks' signature: HMAC-SHA256, keyed with the secret's bytes (the base64 after
 * `whsec_`), over `id.timestamp.body`, sent as `v1,<base64>`.
 */
async function signature(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (character) => character.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return `v1,${base64(mac)}`;
}

/**
 * The secrets a delivery is signed with: the webhook's, and during a rotation's overlap the one it
 * replaced, until its time is up (the cron then drops it; a delivery in between already ignores it).
 */
export async function signingSecrets(env: Bindings, webhook: WebhookRow): Promise<string[]> {
  const keyring = await loadKeyring(env);
  const context = secretContext(webhook.id);
  const current = await unseal(keyring, webhook.sealedSecret, context);
  const previousValid =
    webhook.previousSealedSecret !== null && Date.parse(webhook.previousSecretExpiresAt ?? "") > Date.now();
  if (!previousValid) return [current];
  return [current, await unseal(keyring, webhook.previousSealedSecret!, context)];
}

/**
 * Standard Webhooks' headers for one message: `webhook-signature` lists one signature per secret,
 * space-separated (`v1,<new> v1,<old>`), so that a receiver holding either verifies it.
 */
export async function signedHeaders(secrets: string[], id: string, body: string): Promise<Record<string, string>> {
  const timestamp = Math.floor(Date.now() / 1000);
  const signatures = await Promise.all(secrets.map((secret) => signature(secret, id, timestamp, body)));
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

/** At most `MAX_RESPONSE_BYTES` of a response body, never more held in memory. */
async function readBounded(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < MAX_RESPONSE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(Math.min(size, MAX_RESPONSE_BYTES));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.byteLength - offset);
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** How a receiver answered; `retryAfterSeconds` from a 429 or 503 that said when to come back. */
export type Attempt =
  | { ok: true; status: number }
  | { ok: false; status: number | null; error: string; retryAfterSeconds?: number };

/** One POST to the receiver: no redirect followed, 10 s at most, a host resolving to a private address refused. */
export async function post(
  env: Bindings,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Attempt> {
  const refusal = insecureReceiversAllowed(env) ? undefined : await deliveryRefusal(env, new URL(url));
  if (refusal) return { ok: false, status: null, error: refusal };
  try {
    const response = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await readBounded(response);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const throttled = response.status === 429 || response.status === 503;
    return {
      ok: false,
      status: response.status,
      error: text.slice(0, 500) || `HTTP ${response.status}`,
      retryAfterSeconds: throttled ? retryAfterSeconds(response.headers.get("Retry-After")) : undefined,
    };
  } catch (error) {
    // What went wrong (a timeout, a refused connection), never more than a line.
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : "fetch failed";
    return { ok: false, status: null, error: reason.slice(0, 500) };
  }
}
