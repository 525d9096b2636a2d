import { env, exports } from "cloudflare:workers";
import { drizzle } from "drizzle-orm/d1";
import { expect, vi } from "vitest";
import * as schema from "../../src/db/schema";
import { insertProjectStatements } from "../../src/projects/projects.queries";
import { ProjectInput } from "../../src/projects/projects.schema";
import { mintApiKey } from "../../src/platform/auth/api-keys";
import { nowIso, uuid7 } from "../../src/platform/ids";
import { MembershipLevel } from "../../src/platform/levels";
import { contractBreach } from "./contract";

/** Direct database access for arranging a test; every assertion goes through HTTP. */
export const db = drizzle(env.DB);

let sequence = 0;
const unique = () => `${Date.now().toString(36)}${(sequence += 1)}`;

export type TestUser = typeof schema.users.$inferSelect;

export async function createUser(fields: Partial<typeof schema.users.$inferInsert> = {}): Promise<TestUser> {
  const id = unique();
  const [user] = await db
    .insert(schema.users)
    .values({
      uuid: uuid7(),
      distinctId: `distinct-${id}`,
      firstName: `First${id}`,
      lastName: "Tester",
      email: `user-${id}@example.com`,
      createdAt: nowIso(),
      ...fields,
    })
    .returning();
  return user!;
}

/** The seed's User object, as `created_by` and `user` embed it. */
export function userBasic(user: TestUser) {
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.distinctId,
    first_name: user.firstName,
    last_name: user.lastName,
    email: user.email,
    is_email_verified: user.isEmailVerified,
    hedgehog_config: user.hedgehogConfig,
    role_at_organization: user.roleAtOrganization,
  };
}

/** A member's whole body, as `GET .../members` and a role membership's `organization_member` show it. */
export function memberBody(membership: typeof schema.organizationMemberships.$inferSelect, user: TestUser) {
  return {
    id: membership.id,
    user: userBasic(user),
    level: membership.level,
    joined_at: membership.joinedAt,
    updated_at: membership.updatedAt,
    is_2fa_enabled: false,
    has_social_auth: false,
    last_login: user.lastLogin,
  };
}

export async function createApiKey(
  user: TestUser,
  options: { scopes?: string[]; scopedOrganizations?: string[]; scopedTeams?: number[] } = {},
) {
  const key = await mintApiKey();
  const [row] = await db
    .insert(schema.personalApiKeys)
    .values({
      id: uuid7(),
      userId: user.id,
      label: "test key",
      secureValue: key.secureValue,
      maskValue: key.maskValue,
      scopes: options.scopes ?? ["*"],
      scopedOrganizations: options.scopedOrganizations ?? [],
      scopedTeams: options.scopedTeams ?? [],
      createdAt: nowIso(),
    })
    .returning();
  return { ...row!, value: key.value };
}

export async function addMembership(organizationId: string, user: TestUser, level: number) {
  const now = nowIso();
  const [membership] = await db
    .insert(schema.organizationMemberships)
    .values({ id: uuid7(), organizationId, userId: user.id, level, joinedAt: now, updatedAt: now })
    .returning();
  return membership!;
}

export async function createProject(organizationId: string, input: Record<string, unknown> = {}) {
  const statements = insertProjectStatements(db, organizationId, {
    ...ProjectInput.parse(input),
    name: (input.name as string | undefined) ?? `Project ${unique()}`,
  });
  const [, , [project]] = await db.batch([
    statements.insertProject,
    statements.insertEnvironment,
    statements.selectProject,
    statements.insertPrivacyRule,
  ]);
  return project!;
}

/** A project gone as the deletion job leaves it: marked (its organization's count drops), then deleted. */
export async function deleteProjectRow(id: number) {
  await env.DB.batch([
    env.DB.prepare("update projects set deletion_scheduled_at = ? where id = ?").bind(nowIso(), id),
    env.DB.prepare("delete from projects where id = ?").bind(id),
  ]);
}

/**
 * An organization with its owner, a first project and a key of the given scopes: where every
 * test starts.
 */
export async function setupOrganization(options: { scopes?: string[]; name?: string } = {}) {
  const owner = await createUser();
  const now = nowIso();
  const id = unique();
  const [organization] = await db
    .insert(schema.organizations)
    .values({ id: uuid7(), name: options.name ?? `Org ${id}`, slug: `org-${id}`, createdAt: now, updatedAt: now })
    .returning();
  await addMembership(organization!.id, owner, MembershipLevel.owner);
  const project = await createProject(organization!.id, { name: "Default project" });
  const key = await createApiKey(owner, { scopes: options.scopes ?? ["*"] });
  return { organization: organization!, owner, project, key: key.value };
}

/** A further member of an organization, with their own key. */
export async function addMember(organizationId: string, level: number, scopes: string[] = ["*"]) {
  const user = await createUser();
  const membership = await addMembership(organizationId, user, level);
  const key = await createApiKey(user, { scopes });
  return { user, membership, key: key.value };
}

/** `body`: JSON text or bytes sent as they are, or any other value serialized as JSON. */
type RequestOptions = { key?: string | null; body?: unknown; headers?: Record<string, string> };

/** A JSON body sent as a stream: no Content-Length, so the API cannot read it ahead of its checks. */
export function streamedBody(body: unknown) {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(JSON.stringify(body)));
      controller.close();
    },
  });
}

function requestBody(body: unknown): BodyInit {
  if (typeof body === "string" || body instanceof Uint8Array || body instanceof ReadableStream) return body;
  return JSON.stringify(body);
}

export async function api(method: string, path: string, options: RequestOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    body = requestBody(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  const response = await exports.default.fetch(new Request(`http://localhost${path}`, { method, headers, body }));
  // Decoded as UTF-8 whatever the type (a download's NDJSON or CSV too).
  const text = new TextDecoder().decode(await response.arrayBuffer());
  const isJson = response.headers.get("Content-Type")?.startsWith("application/json") ?? false;
  // Every JSON answer is held to the document's declaration (the document itself aside).
  const breach =
    isJson && text && path !== "/api/schema" && contractBreach(method, path, response.status, JSON.parse(text));
  if (breach) throw new Error(`The answer is not what /api/schema declares: ${breach}`);
  return {
    status: response.status,
    headers: response.headers,
    text,
    // Tests read bodies as the API's JSON; a body of another type is null, and fails the assertion that reads it.
    body: (text && isJson ? JSON.parse(text) : null) as any,
    cost: readCost(response.headers),
  };
}

/**
 * What `Server-Timing` says the request cost in D1. A refusal (401, 403, 404) tells its round
 * trips alone: its rows are NaN here, which no bound on them admits.
 */
export function readCost(headers: Headers) {
  const header = headers.get("Server-Timing") ?? "";
  const match = /queries=(\d+)(?: rows_read=(\d+) rows_written=(\d+))?/.exec(header);
  if (!match) throw new Error(`no D1 cost in Server-Timing: "${header}"`);
  return { queries: Number(match[1]), rowsRead: Number(match[2] ?? NaN), rowsWritten: Number(match[3] ?? NaN) };
}

/**
 * The rows a request read, from its request log line: a refusal's `Server-Timing` tells its round
 * trips alone.
 */
export async function loggedRowsRead(request: () => Promise<unknown>): Promise<number> {
  const logged = vi.spyOn(console, "log");
  try {
    await request();
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)) as { d1?: { rows_read: number } });
    const withCost = lines.filter((line) => line.d1 !== undefined);
    expect(withCost).toHaveLength(1);
    return withCost[0]!.d1!.rows_read;
  } finally {
    logged.mockRestore();
  }
}

export const errorBody = (type: string, code: string, detail: string, attr: string | null = null) => ({
  type,
  code,
  detail,
  attr,
});

/**
 * A `next` link as lists write it: `limit` and `offset`, then the cursor naming the sort key of
 * the page's last row (base64url JSON), so that following it seeks instead of skipping.
 */
export function nextLink(path: string, limit: number, offset: number, lastKey: unknown[], origin = "http://localhost") {
  return pageLink(path, limit, offset, "after", lastKey, origin);
}

/**
 * A `previous` link as lists write it when a whole page lies before: the cursor names the sort key of the page's first
 * row.
 */
export function previousLink(
  path: string,
  limit: number,
  offset: number,
  firstKey: unknown[],
  origin = "http://localhost",
) {
  return pageLink(path, limit, offset, "before", firstKey, origin);
}

function pageLink(
  path: string,
  limit: number,
  offset: number,
  side: "after" | "before",
  key: unknown[],
  origin: string,
) {
  const cursor = btoa(JSON.stringify({ o: offset, k: key }))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
  const separator = path.includes("?") ? "&" : "?";
  return `${origin}${path}${separator}limit=${limit}&offset=${offset}&${side}=${cursor}`;
}

export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A member's access rule on a project, as an invite's `private_project_access` leaves it. */
export async function grantProjectAccess(
  projectId: number,
  membershipId: string,
  level: "member" | "admin" | "none" = "member",
) {
  const now = nowIso();
  await db.insert(schema.accessControls).values({
    id: uuid7(),
    environmentId: projectId,
    resource: "project",
    resourceId: String(projectId),
    organizationMembershipId: membershipId,
    accessLevel: level,
    createdAt: now,
    updatedAt: now,
  });
}
