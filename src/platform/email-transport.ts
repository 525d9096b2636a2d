import type { Bindings } from "./env";

/**
 * The e-mail transport: one JSON POST to `EMAIL_TRANSPORT_URL` per message, authenticated with
 * `Authorization: Bearer <EMAIL_TRANSPORT_TOKEN>` (a Worker secret) when the secret is set. The body
 * is `{"from", "to", "subject", "text"}` (`from` is `EMAIL_FROM`, left out when empty), which is the
 * shape of Resend's `POST https://api.resend.com/emails`, and of any relay of one's own that takes
 * it. The `Idempotency-Key` header is the caller's (an invite's id): a provider that honours it
 * (Resend does, for a day) sends a message redelivered by the queue once.
 */
export type EmailMessage = { to: string; subject: string; text: string };

/** How a send went: `ok`, or why not (the HTTP status, when the transport answered). */
export type EmailAttempt = { ok: true } | { ok: false; status: number | null; error: string };

/** Control characters and line or paragraph separators, each run made one space: a value for one line. */
export const oneLine = (text: string) => text.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, " ");

/**
 * A caller's text as a quoted block, each of its lines after `> `: however it is written, no line
 * of it passes for one of the e-mail's own (an accept link, an expiry).
 */
export const quoted = (text: string) =>
  text
    .split(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/)
    .map((line) => `> ${oneLine(line)}`.trimEnd())
    .join("\n");

/** A transport that has not answered by then counts as failed; the queue tries again. */
const TIMEOUT_MS = 10_000;

export const emailTransportConfigured = (env: Bindings) => env.EMAIL_TRANSPORT_URL.trim() !== "";

export async function sendEmail(env: Bindings, message: EmailMessage, idempotencyKey: string): Promise<EmailAttempt> {
  const headers = new Headers({ "Content-Type": "application/json", "Idempotency-Key": idempotencyKey });
  const token = env.EMAIL_TRANSPORT_TOKEN?.trim();
  if (token) headers.set("Authorization", `Bearer ${token}`);
  const from = env.EMAIL_FROM.trim();
  try {
    const response = await fetch(env.EMAIL_TRANSPORT_URL.trim(), {
      method: "POST",
      headers,
      body: JSON.stringify(from === "" ? message : { from, ...message }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    // Its body is not read: a provider may echo the message, which stays out of the logs.
    await response.body?.cancel();
    return response.ok ? { ok: true } : { ok: false, status: response.status, error: `HTTP ${response.status}` };
  } catch (error) {
    // The name alone: workerd's messages quote the URL, whose credentials a log line must not hold.
    return { ok: false, status: null, error: error instanceof Error ? error.name : "failed" };
  }
}
