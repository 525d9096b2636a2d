import { describe, expect, it } from "vitest";
import { api, errorBody, setupOrganization } from "../support/harness";

/**
 * The limiter's windows are aligned to the wall clock: with less than `needMs` left in this
 * one, start in the next, so that the requests cannot straddle two windows.
 */
async function awaitRoomInWindow(windowMs: number, needMs: number) {
  const leftMs = windowMs - (Date.now() % windowMs);
  if (leftMs < needMs) await new Promise((resolve) => setTimeout(resolve, leftMs + 50));
}

describe("rate limits", () => {
  it("throttles a key past 480 requests a minute, with Retry-After, and no other key", async () => {
    const busy = await setupOrganization();
    const quiet = await setupOrganization();
    const path = `/api/organizations/${busy.organization.id}`;
    const statuses = new Set<number>();
    await awaitRoomInWindow(60_000, 30_000);
    for (let index = 0; index < 480; index += 1) statuses.add((await api("GET", path, { key: busy.key })).status);
    expect([...statuses]).toEqual([200]);

    const throttled = await api("GET", path, { key: busy.key });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get("Retry-After")).toBe("60");
    expect(throttled.body).toEqual(
      errorBody("throttled_error", "throttled", "Request was throttled. Expected available in 60 seconds."),
    );
    expect((await api("GET", `/api/organizations/${quiet.organization.id}`, { key: quiet.key })).status).toBe(200);
  }, 90_000);
});
