/**
 * When a failed delivery is tried again: Svix's schedule, one Queue retry per step. Attempts are
 * counted by Queues (`message.attempts`: 1 for the first), so a step is a message's attempt.
 */

/** The delay before each attempt after the first (which is immediate): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3_600, 5 * 3_600, 10 * 3_600, 10 * 3_600] as const;

/**
 * Attempts in all. The consumer's `max_retries` (wrangler.toml) is one less: after the last
 * attempt fails, its retry moves the message to the dead-letter queue, whose consumer marks the
 * delivery failed.
 */
export const DELIVERY_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** Queues delays a message (`send` or `retry`) by at most 12 hours. */
const MAX_QUEUE_DELAY_SECONDS = 12 * 3_600;

/**
 * The delay before the attempt after failed attempt `attempt`, or undefined when none follows.
 * A receiver's `Retry-After` is honoured within the schedule: it can lengthen the step's wait
 * (never past what Queues allows), not add a step or shorten one.
 */
export function delayAfter(attempt: number, retryAfterSeconds?: number): number | undefined {
  const scheduled = RETRY_DELAYS_SECONDS[attempt - 1];
  if (scheduled === undefined) return undefined;
  return Math.min(Math.max(scheduled, retryAfterSeconds ?? 0), MAX_QUEUE_DELAY_SECONDS);
}

/** `Retry-After` in seconds from now: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
