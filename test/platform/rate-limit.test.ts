import { describe, expect, it } from "vitest";
import { api, errorBody, setupOrganization } from "../support/harness";

const MINUTE_MS = 60_000;

/**
 * The limiter counts in windows aligned to the wall clock; wait for a fresh one when less than
 * half of this one is left, so that the 481 requests below all fall in one window.
 */
async function startOfAWindow() {
  const left = MINUTE_MS - (Date.now() % MINUTE_MS);
  if (left < MINUTE_MS / 2) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe("rate limits", () => {
  it("throttles a key past 480 requests a minute, with Retry-After, and no other key", async () => {
    const busy = await setupOrganization();
    const quiet = await setupOrganization();
    const path = `/api/organizations/${busy.organization.id}`;
    await startOfAWindow();
    const statuses = new Set<number>();
    for (let index = 0; index < 480; index += 1) statuses.add((await api("GET", path, { key: busy.key })).status);
    expect([...statuses]).toEqual([200]);

    const throttled = await api("GET", path, { key: busy.key });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("Retry-After")).toBe("60");
    expect(throttled.body).toEqual(
      errorBody("throttled_error", "throttled", "Request was throttled. Expected available in 60 seconds."),
    );
    expect((await api("GET", `/api/organizations/${quiet.organization.id}`, { key: quiet.key })).status).toBe(200);
  }, 120_000);
});
