import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../env";
import { throttled } from "../errors";

/** Requests one key may make, from configuration (`RATE_LIMIT_PER_MINUTE`, `RATE_LIMIT_PER_HOUR`). */
export type RateLimits = { perMinute: number; perHour: number };
export type RateLimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const WINDOWS = [
  { name: "minute", ms: 60_000, limit: (limits: RateLimits) => limits.perMinute },
  { name: "hour", ms: 3_600_000, limit: (limits: RateLimits) => limits.perHour },
] as const;

type WindowCount = { start: number; count: number };

/**
 * One object per API key (named by the key's hash) counts that key's requests, from every
 * location, in windows aligned to the clock: exact, where a per-location limiter is not, and
 * the only place that can hold an hourly window. Counts live in the object's own storage, so
 * they survive the object being evicted between bursts.
 */
export class ApiKeyRateLimiter extends DurableObject<Bindings> {
  consume(limits: RateLimits): RateLimitVerdict {
    const now = Date.now();
    const windows = WINDOWS.map((window) => {
      const start = now - (now % window.ms);
      const stored = this.ctx.storage.kv.get<WindowCount>(window.name);
      return { window, start, count: stored?.start === start ? stored.count : 0 };
    });
    const full = windows.filter(({ window, count }) => count >= window.limit(limits));
    if (full.length > 0) {
      // Free again when every full window has ended.
      const retryAfterMs = Math.max(...full.map(({ window, start }) => start + window.ms - now));
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
    }
    for (const { window, start, count } of windows) {
      this.ctx.storage.kv.put<WindowCount>(window.name, { start, count: count + 1 });
    }
    return { allowed: true };
  }
}

function configuredLimit(value: string, name: string): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`${name} must be a positive integer, not "${value}"`);
  return limit;
}

/**
 * Counts one request of the key whose hash is `secureValue`. It needs only the hash, so the
 * caller runs it alongside the key lookup, not after it: no round trip in series, no D1 query.
 */
export async function consumeRateLimit(env: Bindings, secureValue: string): Promise<RateLimitVerdict> {
  const limits = {
    perMinute: configuredLimit(env.RATE_LIMIT_PER_MINUTE, "RATE_LIMIT_PER_MINUTE"),
    perHour: configuredLimit(env.RATE_LIMIT_PER_HOUR, "RATE_LIMIT_PER_HOUR"),
  };
  return env.API_KEY_RATE_LIMITER.get(env.API_KEY_RATE_LIMITER.idFromName(secureValue)).consume(limits);
}

export function assertWithinRateLimit(verdict: RateLimitVerdict) {
  if (!verdict.allowed) throw throttled(verdict.retryAfterSeconds);
}
