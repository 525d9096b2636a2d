import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { randomBase62 } from "../../src/platform/ids";
import { limitedAs } from "../../src/platform/auth/refused-keys";
import { api, db, errorBody, ISO_TIMESTAMP, readCost, setupOrganization } from "../support/harness";
import { chunkForInsert } from "../../src/platform/db";
import { expectCreatedUpTo } from "../support/error-bodies";
import { beforeWrites } from "../support/races";
import { createDashboard, dashboardsPath } from "../environments/dashboard-fixtures";
import { awaitRoomInWindow, freshClientAddress } from "../support/rate-windows";

const NOT_FOUND = errorBody("invalid_request", "not_found", "Not found.");
const DAY_MS = 24 * 60 * 60 * 1000;

async function setupLink() {
  const team = await setupOrganization();
  const dashboard = await createDashboard(team.key, team.project.id, { name: "Quarterly" });
  const sharingPath = `${dashboardsPath(team.project.id)}/${dashboard.id}/sharing`;
  const sharing = await api("PATCH", sharingPath, { key: team.key, body: { enabled: true } });
  return { ...team, dashboard, sharingPath, token: sharing.body.access_token as string };
}

/** A browser's request: `api` reads JSON bodies only, and sends JSON. */
async function browse(path: string, init: RequestInit = {}) {
  const response = await exports.default.fetch(new Request(`http://localhost${path}`, { redirect: "manual", ...init }));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const postForm = (path: string, password: string, headers: Record<string, string> = {}) =>
  browse(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({ password }).toString(),
  });

afterEach(() => {
  vi.useRealTimers();
});

describe("share links of a deleted project", () => {
  it("stop at once, before the background steps remove the dashboard: 404 page and JSON", async () => {
    const team = await setupOrganization();
    const project = await api("POST", `/api/organizations/${team.organization.id}/projects`, {
      key: team.key,
      body: { name: "Doomed" },
    });
    const dashboard = await createDashboard(team.key, project.body.id, { name: "Board" });
    const sharingPath = `${dashboardsPath(project.body.id)}/${dashboard.id}/sharing`;
    const sharing = await api("PATCH", sharingPath, { key: team.key, body: { enabled: true } });
    const token = sharing.body.access_token as string;
    expect((await browse(`/shared/${token}`)).status).toBe(200);

    const deleted = await api("DELETE", `/api/projects/${project.body.id}`, { key: team.key });
    expect(deleted.status).toBe(204);
    const page = await browse(`/shared/${token}`);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain("Board");
    const json = await api("GET", `/shared/${token}.json`);
    expect([json.status, json.body]).toEqual([404, NOT_FOUND]);
  });
});

describe("share link expiry", () => {
  it("works until the second expires_at passes, then answers the expired page (410) and 404 as JSON", async () => {
    const { key, sharingPath, token } = await setupLink();
    const expiresAt = new Date(Date.now() + 60 * 60 * 1000);
    expiresAt.setMilliseconds(0);
    const set = await api("PATCH", sharingPath, { key, body: { expires_at: expiresAt.toISOString() } });
    expect(set.status).toBe(200);
    expect(set.body.expires_at).toBe(expiresAt.toISOString());

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(expiresAt.getTime() - 1000);
    expect((await browse(`/shared/${token}`)).status).toBe(200);
    expect((await api("GET", `/shared/${token}.json`)).status).toBe(200);

    vi.setSystemTime(expiresAt.getTime());
    const page = await browse(`/shared/${token}`);
    expect(page.status).toBe(410);
    expect(page.text).toContain("<h1>This link has expired</h1>");
    expect(page.text).not.toContain("Quarterly");
    const json = await api("GET", `/shared/${token}.json`);
    expect(json.status).toBe(404);
    expect(json.body).toEqual(NOT_FOUND);
  });

  it("is lifted with expires_at: null, and refused when not a timestamp", async () => {
    const { key, sharingPath, token } = await setupLink();
    await api("PATCH", sharingPath, { key, body: { expires_at: new Date(Date.now() - 1000).toISOString() } });
    expect((await browse(`/shared/${token}`)).status).toBe(410);
    const lifted = await api("PATCH", sharingPath, { key, body: { expires_at: null } });
    expect(lifted.body.expires_at).toBeNull();
    expect((await browse(`/shared/${token}`)).status).toBe(200);
    const invalid = await api("PATCH", sharingPath, { key, body: { expires_at: "next week" } });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ type: "validation_error", attr: "expires_at" });
  });

  it("is capped to the organization's share_link_max_lifetime_days, which a link without expiry gets", async () => {
    const { key, organization, sharingPath } = await setupLink();
    const setting = await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { share_link_max_lifetime_days: 7 },
    });
    expect(setting.status).toBe(200);
    expect(setting.body.share_link_max_lifetime_days).toBe(7);
    expect((await api("GET", `/api/organizations/${organization.id}`, { key })).body.share_link_max_lifetime_days).toBe(
      7,
    );

    const within = (value: string, days: number) =>
      expect(Math.abs(Date.parse(value) - (Date.now() + days * DAY_MS))).toBeLessThan(60_000);
    const far = await api("PATCH", sharingPath, {
      key,
      body: { expires_at: new Date(Date.now() + 30 * DAY_MS).toISOString() },
    });
    within(far.body.expires_at, 7);
    const near = new Date(Date.now() + DAY_MS).toISOString();
    expect((await api("PATCH", sharingPath, { key, body: { expires_at: near } })).body.expires_at).toBe(near);
    within((await api("PATCH", sharingPath, { key, body: { expires_at: null } })).body.expires_at, 7);

    // A link enabled without expiry gets the limit.
    await api("PATCH", sharingPath, { key, body: { enabled: false } });
    await db.update(schema.sharingConfigurations).set({ expiresAt: null });
    within((await api("PATCH", sharingPath, { key, body: { enabled: true } })).body.expires_at, 7);

    for (const days of [0, 3651, 1.5]) {
      const refused = await api("PATCH", `/api/organizations/${organization.id}`, {
        key,
        body: { share_link_max_lifetime_days: days },
      });
      expect(refused.status).toBe(400);
    }
    const cleared = await api("PATCH", `/api/organizations/${organization.id}`, {
      key,
      body: { share_link_max_lifetime_days: null },
    });
    expect(cleared.body.share_link_max_lifetime_days).toBeNull();
  });
});

describe("share link pause", () => {
  it("enabled: false answers the paused page and keeps the token, which works again once enabled", async () => {
    const { key, sharingPath, token } = await setupLink();
    const paused = await api("PATCH", sharingPath, { key, body: { enabled: false } });
    expect(paused.body.access_token).toBe(token);
    const page = await browse(`/shared/${token}`);
    expect(page.status).toBe(404);
    expect(page.text).toContain("<h1>This link is paused</h1>");
    expect(page.text).not.toContain("Quarterly");
    expect((await api("GET", `/shared/${token}.json`)).body).toEqual(NOT_FOUND);
    await api("PATCH", sharingPath, { key, body: { enabled: true } });
    expect((await browse(`/shared/${token}`)).status).toBe(200);
  });
});

describe("share link views", () => {
  it("counts an address's views once a minute: reloading without end writes no more", async () => {
    const { key, sharingPath, token } = await setupLink();
    const from = (address: string) => ({ headers: { "CF-Connecting-IP": address } });
    const [first, second] = [freshClientAddress(), freshClientAddress()];
    for (let view = 0; view < 20; view += 1) await api("GET", `/shared/${token}.json`, from(first));
    await api("GET", `/shared/${token}.json`, from(second));
    await vi.waitFor(async () => expect((await api("GET", sharingPath, { key })).body.view_count).toBe(2));
    // Settled: no write after the response is still to come.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await api("GET", sharingPath, { key })).body.view_count).toBe(2);
  });

  it("counts no HEAD of the page or its JSON: a link checker's probe shows no one the dashboard", async () => {
    const { key, sharingPath, token } = await setupLink();
    const from = { headers: { "CF-Connecting-IP": freshClientAddress() } };
    expect((await api("HEAD", `/shared/${token}`, from)).status).toBe(200);
    expect((await api("HEAD", `/shared/${token}.json`, from)).status).toBe(200);
    await api("GET", `/shared/${token}.json`, { headers: { "CF-Connecting-IP": freshClientAddress() } });
    await vi.waitFor(async () => expect((await api("GET", sharingPath, { key })).body.view_count).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await api("GET", sharingPath, { key })).body.view_count).toBe(1);
  });

  it("counts views of the page and its JSON after the response, with no visitor data", async () => {
    const { key, sharingPath, token } = await setupLink();
    await browse(`/shared/${token}`);
    await api("GET", `/shared/${token}.json`);
    await browse(`/shared/${token}x`);
    await vi.waitFor(async () => {
      const { body } = await api("GET", sharingPath, { key });
      expect(body.view_count).toBe(2);
      expect(body.last_viewed_at).toMatch(ISO_TIMESTAMP);
    });
  });
});

describe("password-protected share links", () => {
  async function setupProtected() {
    const link = await setupLink();
    const required = await api("PATCH", link.sharingPath, { key: link.key, body: { password_required: true } });
    expect(required.body.password_required).toBe(true);
    const created = await api("POST", `${link.sharingPath}/passwords`, {
      key: link.key,
      body: { raw_password: "correct horse", note: "for the board" },
    });
    return { ...link, created };
  }

  it("creates and deletes passwords in PostHog's shapes, storing only PBKDF2 hashes", async () => {
    const { key, sharingPath, created, dashboard, owner } = await setupProtected();
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      password: "correct horse",
      note: "for the board",
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      created_by_email: owner.email,
    });
    const generated = await api("POST", `${sharingPath}/passwords`, { key, body: {} });
    expect(generated.body.password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const listed = (await api("GET", sharingPath, { key })).body.share_passwords;
    const { password: _shown, ...stored } = created.body;
    expect(listed[0]).toEqual({ ...stored, is_active: true });
    expect(listed).toHaveLength(2);

    const rows = await db
      .select()
      .from(schema.sharePasswords)
      .where(eq(schema.sharePasswords.dashboardId, dashboard.id));
    for (const row of rows) {
      expect(row.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
      expect(row.passwordHash).not.toContain("correct horse");
    }
    expect(new Set(rows.map((row) => row.passwordHash.split("$")[2])).size).toBe(2);

    const deleted = await api("DELETE", `${sharingPath}/passwords/${created.body.id}`, { key });
    expect(deleted.status).toBe(204);
    expect((await api("DELETE", `${sharingPath}/passwords/${created.body.id}`, { key })).status).toBe(404);
    expect((await api("GET", sharingPath, { key })).body.share_passwords).toHaveLength(1);
  });

  it("answers its form without reading the dashboard's tiles, which it reads once a session opens it", async () => {
    const { token, dashboard } = await setupProtected();
    const now = new Date().toISOString();
    const tiles = Array.from({ length: 200 }, () => ({ dashboardId: dashboard.id as number, createdAt: now }));
    for (const chunk of chunkForInsert(schema.dashboardTiles, tiles))
      await db.insert(schema.dashboardTiles).values(chunk);

    // Anyone who has the link may load its form, as often as they like: a few rows each time.
    const form = await exports.default.fetch(new Request(`http://localhost/shared/${token}`));
    expect([form.status, (await form.text()).includes('name="password"')]).toEqual([200, true]);
    expect(readCost(form.headers).rowsRead).toBeLessThanOrEqual(20);

    const unlocked = await api("POST", `/shared/${token}.json`, { body: { password: "correct horse" } });
    const session = { Authorization: `Bearer ${unlocked.body.shareToken}` };
    const opened = await api("GET", `/shared/${token}.json`, { headers: session });
    expect(opened.status).toBe(200);
    expect(opened.body.dashboard.tiles).toHaveLength(200);
  });

  // The second read of a locked link (its tiles, once a session opened it) holds what the first read judged.
  type Revoke = (sharingPath: string, passwordId: string) => { method: string; path: string; body?: unknown };
  const revokes: [string, Revoke][] = [
    ["refreshed", (sharingPath) => ({ method: "POST", path: `${sharingPath}/refresh` })],
    ["paused", (sharingPath) => ({ method: "PATCH", path: sharingPath, body: { enabled: false } })],
    [
      "stripped of the visitor's password",
      (sharingPath, passwordId) => ({ method: "DELETE", path: `${sharingPath}/passwords/${passwordId}` }),
    ],
  ];
  it.each(revokes)(
    "answers a view 404, counted as none, when its link was %s between its two reads",
    async (_, revokeCall) => {
      const { key, token, sharingPath, dashboard, project, created } = await setupProtected();
      const unlocked = await api("POST", `/shared/${token}.json`, { body: { password: "correct horse" } });
      const session = { Authorization: `Bearer ${unlocked.body.shareToken}`, "CF-Connecting-IP": freshClientAddress() };
      const { method, path, body } = revokeCall(sharingPath, created.body.id);
      const meanwhile = beforeWrites([
        [
          /"sharing_configurations"\."enabled" = /,
          async () => [
            (await api(method, path, { key, body })).status,
            (
              await api("PATCH", `${dashboardsPath(project.id)}/${dashboard.id}`, {
                key,
                body: { tiles: [{ text: { body: "Written after the revoke" } }] },
              })
            ).status,
          ],
        ],
      ]);
      const view = await api("GET", `/shared/${token}.json`, { headers: session });
      expect(meanwhile).toEqual([[method === "DELETE" ? 204 : 200, 200]]);
      vi.restoreAllMocks();
      expect([view.status, view.body]).toEqual([404, NOT_FOUND]);
      expect(view.text).not.toContain("Written after the revoke");
      // A view is counted after the response: give it the time to land, were it recorded.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const views = await db
        .select({ count: schema.sharingConfigurations.viewCount, last: schema.sharingConfigurations.lastViewedAt })
        .from(schema.sharingConfigurations)
        .where(eq(schema.sharingConfigurations.dashboardId, dashboard.id));
      expect(views).toEqual([{ count: 0, last: null }]);
    },
  );

  it("holds at most 10 passwords, however many are created at once", async () => {
    const { key, sharingPath } = await setupProtected();
    const creates = await Promise.all(
      Array.from({ length: 11 }, (_, index) =>
        api("POST", `${sharingPath}/passwords`, { key, body: { raw_password: `password number ${index}` } }),
      ),
    );
    // One exists already.
    expectCreatedUpTo(
      creates,
      9,
      errorBody(
        "validation_error",
        "max_length",
        "A share link holds at most 10 passwords. Delete one before creating another.",
      ),
    );
    expect((await api("GET", sharingPath, { key })).body.share_passwords).toHaveLength(10);
  });

  it("refuses passwords before password_required, and too short ones", async () => {
    const { key, sharingPath } = await setupLink();
    const early = await api("POST", `${sharingPath}/passwords`, { key, body: { raw_password: "correct horse" } });
    expect(early.status).toBe(400);
    await api("PATCH", sharingPath, { key, body: { password_required: true } });
    const short = await api("POST", `${sharingPath}/passwords`, { key, body: { raw_password: "short" } });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ attr: "raw_password" });
  });

  it("asks for the password, refuses a wrong one (401), opens with the right one through a cookie", async () => {
    const { token } = await setupProtected();
    const form = await browse(`/shared/${token}`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<form method="post">');
    expect(form.text).not.toContain("Quarterly");
    expect((await api("GET", `/shared/${token}.json`)).status).toBe(401);

    const wrong = await postForm(`/shared/${token}`, "wrong horse");
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain("Incorrect password.");
    expect(wrong.text).not.toContain("Quarterly");
    expect(wrong.headers.get("Set-Cookie")).toBeNull();

    const right = await postForm(`/shared/${token}`, "correct horse");
    expect(right.status).toBe(303);
    expect(right.headers.get("Location")).toBe(`/shared/${token}`);
    const cookie = right.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^posthog_sharing_token=[^;]+;/);
    expect(cookie).toContain(`Path=/shared/${token}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("Secure");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Max-Age=86400");
    const session = cookie.split(";")[0]!;
    const page = await browse(`/shared/${token}`, { headers: { Cookie: session } });
    expect(page.status).toBe(200);
    expect(page.text).toContain("Quarterly");

    // A forged or tampered session opens nothing.
    const tampered = `${session.slice(0, -2)}xx`;
    expect((await browse(`/shared/${token}`, { headers: { Cookie: tampered } })).text).not.toContain("Quarterly");
  });

  it("opens with the visitor's session though a stale or planted cookie of the name comes first", async () => {
    const { token } = await setupProtected();
    const unlocked = await api("POST", `/shared/${token}.json`, { body: { password: "correct horse" } });
    const session = unlocked.body.shareToken as string;
    // A cookie a deleted password's session left, or one a sibling subdomain planted
    // (Domain=.example.com; Path=/shared/<token>): a browser sends the older one first.
    const stale = "posthog_sharing_token=0190c0de-0000-7000-8000-000000000000.9999999999.forged";

    // One cookie of the name for each path that covers the JSON's (`/`, `/shared`, `/shared/`, its own).
    const json = await api("GET", `/shared/${token}.json`, {
      headers: { Authorization: `Bearer ${session}`, Cookie: [stale, stale, stale, stale].join("; ") },
    });
    expect(json.status).toBe(200);
    expect(json.body.dashboard.name).toBe("Quarterly");
    const page = await browse(`/shared/${token}`, {
      headers: { Cookie: `${stale}; posthog_sharing_token=${session}` },
    });
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>Quarterly</h1>");
    // Stale cookies alone open nothing.
    const locked = await browse(`/shared/${token}`, { headers: { Cookie: `${stale}; ${stale}` } });
    expect(locked.text).toContain('<form method="post">');
    expect(locked.text).not.toContain("Quarterly");
  });

  it("answers PostHog's JSON unlock, whose shareToken opens the JSON form, until the password is deleted", async () => {
    const { key, sharingPath, token, created } = await setupProtected();
    const wrong = await api("POST", `/shared/${token}.json`, { body: { password: "wrong horse" } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(errorBody("authentication_error", "incorrect_password", "Incorrect password."));
    const right = await api("POST", `/shared/${token}.json`, { body: { password: "correct horse" } });
    expect(right.status).toBe(200);
    const bearer = { Authorization: `Bearer ${right.body.shareToken}` };
    const json = await api("GET", `/shared/${token}.json`, { headers: bearer });
    expect(json.status).toBe(200);
    expect(json.body.dashboard.name).toBe("Quarterly");

    await api("DELETE", `${sharingPath}/passwords/${created.body.id}`, { key });
    expect((await api("GET", `/shared/${token}.json`, { headers: bearer })).status).toBe(401);
  });

  it("counts wrong passwords against the address's refusals: 429 once past the limit", async () => {
    const { token } = await setupProtected();
    const from = { "CF-Connecting-IP": freshClientAddress() };
    const statuses: number[] = [];
    // 30 refusals a minute, all in one window (clock-aligned) so that the last check falls in it too.
    await awaitRoomInWindow(60_000, 10_000);
    while (statuses.at(-1) !== 429 && statuses.length < 31) {
      statuses.push((await postForm(`/shared/${token}`, `guess ${randomBase62(8)}`, from)).status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set([401]));
    // Even the right password waits for the window to end.
    expect((await postForm(`/shared/${token}`, "correct horse", from)).status).toBe(429);
  }, 30_000);

  it("tries no password from an address past its limit, though this isolate never answered it 429", async () => {
    const { token } = await setupProtected();
    const address = freshClientAddress();
    await awaitRoomInWindow(60_000, 10_000);
    // The location's counter is shared by its isolates, their memory of throttled addresses is not:
    // thirty refusals answered by other isolates leave this one knowing nothing of them.
    let counted = 0;
    while ((await env.AUTH_FAILURE_LIMITER.limit({ key: limitedAs(address) })).success) counted++;
    expect(counted).toBe(30);
    const right = await api("POST", `/shared/${token}.json`, {
      body: { password: "correct horse" },
      headers: { "CF-Connecting-IP": address },
    });
    expect(right.headers.get("Set-Cookie")).toBeNull();
    expect(right.status).toBe(429);
  }, 30_000);

  it("answers a form it cannot read with 400 and one over 1 MiB with 413, as every route's body", async () => {
    const { token } = await setupProtected();
    const post = (body: string, contentType: string) =>
      api("POST", `/shared/${token}`, { body, headers: { "Content-Type": contentType } });
    const unreadable = errorBody(
      "validation_error",
      "parse_error",
      "Form parse error - The body is not a well-formed form.",
    );
    expect(await post("garbage", "multipart/form-data")).toMatchObject({ status: 400, body: unreadable });
    const cutShort = '--x\r\nContent-Disposition: form-data; name="password"\r\n\r\nabc\r\n';
    expect(await post(cutShort, "multipart/form-data; boundary=x")).toMatchObject({ status: 400, body: unreadable });
    const tooLarge = await post(`password=${"a".repeat(1_100_000)}`, "application/x-www-form-urlencoded");
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toEqual(
      errorBody("invalid_request", "payload_too_large", "Request body is too large (over 1 MiB)."),
    );
  });
});
