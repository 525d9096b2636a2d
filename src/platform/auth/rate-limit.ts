import { DurableObject } from "cloudflare:workers";
import type { Context } from "hono";
import type { AppEnv, Bindings } from "../env";
import { throttled } from "../errors";
import { IsolateMemory } from "../isolate-memory";
import { errorFields, logLine } from "../log";
import { MINUTE_LIMIT, MINUTE_MS } from "./minute-limit";
import { secondsUntil, windowEnd } from "./windows";

const HOUR_MS = 3_600_000;
const KEYS_REMEMBERED_AT_MOST = 10_000;

/** A key's requests counted so far in the clock hour that ends at `hourEnd` (epoch ms). */
type HourCount = { hourEnd: number; count: number };

/**
 * One object per API key (named by the key's hash) counts that key's requests from every
 * location in clock hours: the exact count a per-location limiter cannot keep. It is told of a
 * request after the response (`waitUntil`), never asked on the request's way, and its storage
 * is deleted when the hour ends, so that it never grows.
 */
export class ApiKeyHourCounter extends DurableObject<Bindings> {
  /**
   * Counts `requests` more of the key's (an isolate reports its requests in flight together). A
   * report is numbered by its reporter (`batch`): one sent again after a failure that came after
   * it was counted is answered, not counted twice.
   */
  async count(requests = 1, batch?: ReportBatch): Promise<HourCount> {
    const now = Date.now();
    const hourEnd = windowEnd(now, HOUR_MS);
    const stored = this.ctx.storage.kv.get<HourCount>("hour");
    const before = stored?.hourEnd === hourEnd ? stored.count : 0;
    const count = before + requests;
    if (batch !== undefined) {
      const name = `reporter:${batch.reporter}`;
      const last = this.ctx.storage.kv.get<{ hourEnd: number; sequence: number; count?: number }>(name);
      // Answered with the count it made then, so that the one report that crossed the limit is
      // still known as that one, however many were counted since.
      if (last?.hourEnd === hourEnd && last.sequence >= batch.sequence) return { hourEnd, count: last.count ?? before };
      this.ctx.storage.kv.put(name, { hourEnd, sequence: batch.sequence, count });
    }
    this.ctx.storage.kv.put<HourCount>("hour", { hourEnd, count });
    // The hour's first requests: when it ends, nothing of it is worth keeping.
    if (before === 0) await this.ctx.storage.setAlarm(hourEnd);
    return { hourEnd, count };
  }

  override async alarm() {
    await this.ctx.storage.deleteAll();
  }
}

/**
 * What this isolate knows of a key's hour: the count its counter last reported, and this
 * isolate's requests admitted since that the counter has not reported back yet (`pending`), of
 * which `unsent` are not yet on their way to it. Admitting against both makes the isolate exact
 * for its own requests, however many are in flight.
 */
type HourView = {
  hourEnd: number;
  counted: number;
  pending: number;
  unsent: number;
  sending: boolean;
  /** This view's reports, numbered: a view made again (evicted, a new hour) has another reporter. */
  reporter: string;
  sequence: number;
  /** A report whose call failed: sent again as it was before any other. */
  retrying?: { batch: ReportBatch; requests: number };
};
/** A report's name, for the counter: who sent it, and its number among theirs. */
type ReportBatch = { reporter: string; sequence: number };
const hourViews = new IsolateMemory<string, HourView>(KEYS_REMEMBERED_AT_MOST);

const newView = (hourEnd: number, counted: number): HourView => ({
  hourEnd,
  counted,
  pending: 0,
  unsent: 0,
  sending: false,
  reporter: crypto.randomUUID(),
  sequence: 0,
});

/** KV: a key's hour, once used up, for the isolates that have not served the key this hour. */
export const exhaustedHourKey = (secureValue: string) => `api_key_hour:${secureValue}`;

function configuredLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new Error(`RATE_LIMIT_PER_HOUR must be a positive integer, not "${value}"`);
  }
  return limit;
}

/** What one key may make, as `GET /api/personal_api_keys/@current` tells it. */
export const keyRateLimits = (env: Bindings) => ({
  per_minute: MINUTE_LIMIT,
  per_hour: configuredLimit(env.RATE_LIMIT_PER_HOUR),
});

/**
 * The key's hour as KV has it, read beside the key's own KV lookup (so no round trip in series),
 * and only by an isolate that has no view of the key's hour yet.
 */
export async function publishedHour(env: Bindings, secureValue: string): Promise<HourCount | null> {
  if (hourViews.get(secureValue) !== undefined) return null;
  return env.API_KEY_CACHE.get<HourCount>(exhaustedHourKey(secureValue), "json");
}

/** After an isolate's counter reported the hour's last unit used: the others learn it from KV. */
export async function publishExhausted(env: Bindings, secureValue: string, hour: HourCount) {
  const secondsLeft = Math.ceil((hour.hourEnd - Date.now()) / 1000);
  // KV keeps an entry 60 s at the least; a reader compares `hourEnd` with its clock anyway.
  await env.API_KEY_CACHE.put(exhaustedHourKey(secureValue), JSON.stringify(hour), {
    expirationTtl: Math.max(60, secondsLeft),
  });
}

/** This isolate's view of the key's current hour, started from what KV published, if anything. */
function hourView(secureValue: string, published: HourCount | null, now: number): HourView {
  const known = hourViews.get(secureValue, now);
  if (known !== undefined) return known;
  const hourEnd = windowEnd(now, HOUR_MS);
  const view = newView(hourEnd, published?.hourEnd === hourEnd ? published.count : 0);
  hourViews.set(secureValue, view, hourEnd);
  return view;
}

const hasUnreported = (view: HourView) => view.retrying !== undefined || view.unsent > 0;

/** A count reported by the key's counter: what the isolate now knows of that hour. */
function learn(secureValue: string, reported: HourCount) {
  const view = hourViews.get(secureValue);
  if (view?.hourEnd === reported.hourEnd) {
    // Reports can arrive out of order; a count only grows within an hour.
    view.counted = Math.max(view.counted, reported.count);
  } else if (view === undefined || view.hourEnd < reported.hourEnd) {
    hourViews.set(secureValue, newView(reported.hourEnd, reported.count), reported.hourEnd);
  }
}

/**
 * How long a report waits for more of the key's requests to carry. A call of the counter costs
 * the isolate about as much CPU as the rest of a small read; a busy key's requests go in one call
 * per this time, and the count comes back this much later (the isolate's own view stays exact).
 */
const REPORT_GATHERING_MS = 100;
/** Calls a report makes before it leaves its requests to the next report: a failing counter is not hammered. */
const REPORT_ATTEMPTS = 3;

/** The next call's batch: one that failed, again as it was, else the requests not sent yet, numbered. */
function nextBatch(view: HourView) {
  if (view.retrying === undefined) {
    view.sequence += 1;
    view.retrying = { batch: { reporter: view.reporter, sequence: view.sequence }, requests: view.unsent };
    view.unsent = 0;
  }
  return view.retrying;
}

/**
 * After the response: the isolate's requests of the key are counted, and the count comes back.
 * One call at a time per key and isolate, after gathering for `REPORT_GATHERING_MS`: the requests
 * admitted meanwhile, or while a call is out, go together, so a busy key costs its counter a call
 * per tenth of a second, not one per request.
 */
async function reportCounts(env: Bindings, secureValue: string, view: HourView, perHour: number) {
  view.sending = true;
  try {
    for (let failures = 0; hasUnreported(view) && failures < REPORT_ATTEMPTS; ) {
      await new Promise((resolve) => setTimeout(resolve, REPORT_GATHERING_MS * (failures + 1)));
      const { batch, requests } = nextBatch(view);
      let reported: HourCount;
      try {
        const counter = env.API_KEY_HOUR_COUNTER.get(env.API_KEY_HOUR_COUNTER.idFromName(secureValue));
        reported = await counter.count(requests, batch);
      } catch (error) {
        // Counted or not, the batch stays pending here and goes again as it was (the counter
        // counts a number once): in this report, or in the key's next one.
        failures += 1;
        logLine("warn", { task: "report requests to the hourly counter", requests, error: errorFields(error) });
        continue;
      }
      view.retrying = undefined;
      view.pending -= requests;
      learn(secureValue, reported);
      // Exactly one report of the hour crosses the limit: that one tells the others.
      if (reported.count >= perHour && reported.count - requests < perHour) {
        // A failure here (KV takes one write a second per key) leaves the other isolates to learn it from the counter.
        await publishExhausted(env, secureValue, reported).catch((error: unknown) =>
          logLine("warn", { task: "publish an exhausted hour", error: errorFields(error) }),
        );
      }
    }
  } finally {
    view.sending = false;
  }
}

/**
 * Admits a request of a known key or throws 429, waiting on no one place: the hour from this
 * isolate's view (or KV's), the minute from the rate-limiting binding, which answers from the
 * location it runs in. The hourly counter is told after the response.
 */
export async function admitRequest(c: Context<AppEnv>, secureValue: string, published: HourCount | null) {
  const perHour = configuredLimit(c.env.RATE_LIMIT_PER_HOUR);
  const now = Date.now();
  const view = hourView(secureValue, published, now);
  if (view.counted + view.pending >= perHour) {
    // Refused here, but what this isolate admitted and could not report yet must still reach the
    // counter, so that the other locations learn the hour is used up.
    if (hasUnreported(view) && !view.sending) c.executionCtx.waitUntil(reportCounts(c.env, secureValue, view, perHour));
    throw throttled(secondsUntil(view.hourEnd, now));
  }
  // Reserved before the binding is awaited, so that requests in flight here see it.
  view.pending += 1;
  let withinMinute = false;
  try {
    ({ success: withinMinute } = await c.env.API_KEY_MINUTE_LIMITER.limit({ key: secureValue }));
  } finally {
    if (!withinMinute) view.pending -= 1;
  }
  if (!withinMinute) throw throttled(secondsUntil(windowEnd(now, MINUTE_MS), now));
  view.unsent += 1;
  // A report already on its way takes this request too, in its next call.
  if (!view.sending) c.executionCtx.waitUntil(reportCounts(c.env, secureValue, view, perHour));
}
