// The floor of `npm run bench:throughput`: the least an authenticated read of the API does, with
// no framework, no validation and no routing. Per request: the key's hash, one KV get (the key's
// cache entry), one call of the rate-limiting binding, one D1 query (the key's user), one JSON log
// line, and a small JSON answer. `POST /setup` (once, before measuring) creates the user and
// caches the key sent; `/healthz` tells the harness the server is up.

interface Env {
  DB: D1Database;
  KEYS: KVNamespace;
  LIMITER: RateLimit;
}

type CachedKey = { keyId: string; userId: number };

const USER_ID = 1;

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

function bearer(request: Request): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("Authorization") ?? "")?.[1];
}

const cacheKey = (secureValue: string) => `personal_api_key:${secureValue}`;

async function setup(env: Env, key: string): Promise<Response> {
  await env.DB.batch([
    env.DB.prepare(
      `CREATE TABLE IF NOT EXISTS users (id integer PRIMARY KEY AUTOINCREMENT NOT NULL, uuid text NOT NULL,
        distinct_id text NOT NULL, first_name text DEFAULT '' NOT NULL, last_name text DEFAULT '' NOT NULL,
        email text NOT NULL, is_email_verified integer DEFAULT false NOT NULL, created_at text NOT NULL)`,
    ),
    env.DB.prepare(
      `INSERT OR IGNORE INTO users (id, uuid, distinct_id, first_name, email, is_email_verified, created_at)
        VALUES (?, ?, ?, 'Owner', 'owner@example.com', 1, ?)`,
    ).bind(USER_ID, crypto.randomUUID(), crypto.randomUUID(), new Date().toISOString()),
  ]);
  const cached: CachedKey = { keyId: crypto.randomUUID(), userId: USER_ID };
  await env.KEYS.put(cacheKey(await sha256Hex(key)), JSON.stringify(cached));
  return Response.json({ ok: true });
}

async function read(request: Request, env: Env): Promise<Response> {
  const startedAt = Date.now();
  const key = bearer(request);
  if (!key) return Response.json({ detail: "Authentication credentials were not provided." }, { status: 401 });
  const secureValue = await sha256Hex(key);
  const cached = await env.KEYS.get<CachedKey>(cacheKey(secureValue), "json");
  if (!cached) return Response.json({ detail: "Invalid personal API key." }, { status: 401 });
  const { success } = await env.LIMITER.limit({ key: secureValue });
  if (!success) return Response.json({ detail: "Request was throttled." }, { status: 429 });
  const user = await env.DB.prepare(
    "SELECT id, uuid, distinct_id, first_name, last_name, email, is_email_verified FROM users WHERE id = ?",
  )
    .bind(cached.userId)
    .first();
  const status = user ? 200 : 404;
  const line = {
    level: "info",
    request_id: crypto.randomUUID(),
    method: request.method,
    route: new URL(request.url).pathname,
    status,
    duration_ms: Date.now() - startedAt,
    key_id: cached.keyId,
    user_id: cached.userId,
  };
  console.log(JSON.stringify(line));
  return Response.json(user ?? { detail: "Not found." }, { status });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/healthz") return Response.json({ status: "ok" });
    const key = bearer(request);
    if (request.method === "POST" && pathname === "/setup" && key) return setup(env, key);
    return read(request, env);
  },
} satisfies ExportedHandler<Env>;
