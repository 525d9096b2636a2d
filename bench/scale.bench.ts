import { expect, it } from "vitest";
import { MembershipLevel } from "../src/platform/levels";
import { exports } from "cloudflare:workers";
import { addMember, api, createProject, grantProjectAccess, readCost } from "../test/support/harness";
import {
  emptySeedRows,
  insertSeedRows,
  seedOrganization,
  seedOtherOrganizations,
  type SeededOrganization,
  type SeedRows,
} from "../test/support/seed";
import { measure, report, type Measurement } from "./report";

/**
 * Every route of `/api/schema` that reads, and one write per resource, in an organization with
 * 10 rows of each kind and in one with 10,000 (projects stop at the organization's limit of
 * 2,000), among 1,000 other organizations: what a request costs must follow its page, not the
 * data around it.
 */
const SMALL = 10;
const LARGE = 10_000;
const OTHER_ORGANIZATIONS = 1000;

type Request = {
  label: string;
  method: string;
  path: (o: SeededOrganization) => string;
  body?: (o: SeededOrganization) => unknown;
};

const get = (label: string, path: Request["path"]): Request => ({ label, method: "GET", path });
const write = (label: string, method: string, path: Request["path"], body?: Request["body"]): Request => ({
  label,
  method,
  path,
  body,
});

const organization = (o: SeededOrganization) => `/api/organizations/${o.organization.id}`;
const environment = (o: SeededOrganization) => `/api/environments/${o.project.id}`;
const dashboard = (o: SeededOrganization) => `${environment(o)}/dashboards/${o.dashboardId}`;

/** Lists, each as the first page of 10, the last one at offset count - 10 (cold), and through the links. */
const LISTS: [string, Request["path"]][] = [
  ["/api/organizations/:id/members", (o) => `${organization(o)}/members`],
  ["/api/organizations/:id/invites", (o) => `${organization(o)}/invites`],
  ["/api/organizations/:id/domains", (o) => `${organization(o)}/domains`],
  ["/api/organizations/:id/projects", (o) => `${organization(o)}/projects`],
  ["/api/organizations/:id/batch_exports", (o) => `${organization(o)}/batch_exports`],
  ["/api/environments/:id/batch_exports", (o) => `${environment(o)}/batch_exports`],
  ["/api/environments/:id/dashboards", (o) => `${environment(o)}/dashboards`],
  ["/api/projects/:id/dashboards", (o) => `/api/projects/${o.project.id}/dashboards`],
  ["/api/projects", () => "/api/projects"],
  ["/api/organizations", () => "/api/organizations"],
];

const READS: Request[] = [
  get("GET /api/users/@me", () => "/api/users/@me"),
  get("GET /api/organizations/:id", organization),
  get("GET /api/organizations/@current", () => "/api/organizations/@current"),
  get("GET /api/organizations/:id/projects/:id", (o) => `${organization(o)}/projects/${o.project.id}`),
  get("GET /api/organizations/:id/projects/@current", (o) => `${organization(o)}/projects/@current`),
  get("GET /api/organizations/:id/domains/:id", (o) => `${organization(o)}/domains/${o.domainId}`),
  get("GET /api/organizations/:id/batch_exports/:id", (o) => `${organization(o)}/batch_exports/${o.batchExportId}`),
  get("GET /api/organizations/:id/members?email=", (o) => `${organization(o)}/members?email=${o.owner.email}`),
  get("GET /api/environments/:id", environment),
  get("GET /api/environments/@current", () => "/api/environments/@current"),
  get("GET /api/environments/:id/dashboards/:id", dashboard),
  get("GET /api/environments/@current/dashboards/:id", (o) => `/api/environments/@current/dashboards/${o.dashboardId}`),
  get("GET .../dashboards/:id/access_controls", (o) => `${dashboard(o)}/access_controls`),
  get("GET .../dashboards/:id/collaborators", (o) => `${environment(o)}/dashboards/${o.dashboardId}/collaborators`),
  get("GET .../dashboards/:id/sharing", (o) => `${environment(o)}/dashboards/${o.dashboardId}/sharing`),
  get("GET /api/environments/:id/batch_exports/:id", (o) => `${environment(o)}/batch_exports/${o.batchExportId}`),
  get("GET /api/environments/:id/access_controls", (o) => `${environment(o)}/access_controls`),
  get("GET /api/projects/:id", (o) => `/api/projects/${o.project.id}`),
  get("GET /api/projects/@current", () => "/api/projects/@current"),
  get("GET /api/personal_api_keys/:id", (o) => `/api/personal_api_keys/${o.personalApiKeyId}`),
  get("GET /api/personal_api_keys/@current", () => "/api/personal_api_keys/@current"),
  get("GET /api/personal_api_keys", () => "/api/personal_api_keys"),
  get("GET /api/signup/:token", (o) => `/api/signup/${o.inviteToken}`),
  get("GET /api/organizations/:id/activity_log?limit=10", (o) => `${organization(o)}/activity_log?limit=10`),
  get("GET .../activity_log?limit=10&cursor=20 (deep)", (o) => `${organization(o)}/activity_log?limit=10&cursor=20`),
  get(
    "GET .../activity_log?scope=Dashboard&limit=10",
    (o) => `${organization(o)}/activity_log?scope=Dashboard&limit=10`,
  ),
  get("GET /api/environments/:id/activity_log?limit=10", (o) => `${environment(o)}/activity_log?limit=10`),
];

/**
 * The dashboards list filtered: by a search read from the trigram index (one match in each
 * organization, the same in upper case, and "seeded 1", which matches 1 dashboard of 10 and 1,111
 * of 10,000), by a tag read from the tag index (one match), and by a search too short for a
 * trigram, which tests each dashboard along the list until the page is full. The members list
 * searched the same ways: the owner's e-mail (one match), "seed-1" (many: the seeded members'
 * e-mails hold their ids) and a search too short for a trigram.
 */
const FILTERS: Request[] = [
  get("GET .../dashboards?search=shared board", (o) => `${environment(o)}/dashboards?search=shared%20board`),
  get("GET .../dashboards?search=SHARED", (o) => `${environment(o)}/dashboards?search=SHARED`),
  get("GET .../dashboards?search=seeded 1&limit=10", (o) => `${environment(o)}/dashboards?search=seeded%201&limit=10`),
  get("GET .../dashboards?tags=measured", (o) => `${environment(o)}/dashboards?tags=measured`),
  get("GET .../dashboards?search=sh (short: no trigram)", (o) => `${environment(o)}/dashboards?search=sh`),
  get("GET .../members?search=<owner's e-mail>", (o) => `${organization(o)}/members?search=${o.owner.email}`),
  get("GET .../members?search=seed-1&limit=10", (o) => `${organization(o)}/members?search=seed-1&limit=10`),
  get("GET .../members?search=se (short: no trigram)", (o) => `${organization(o)}/members?search=se`),
];

const S3_EXPORT = {
  interval: "hour",
  destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "events/" } },
};

const WRITES: Request[] = [
  write(
    "PATCH /api/users/@me",
    "PATCH",
    () => "/api/users/@me",
    () => ({ first_name: "Measured" }),
  ),
  write("PATCH /api/organizations/:id", "PATCH", organization, () => ({ name: "Measured" })),
  write(
    "POST .../invites",
    "POST",
    (o) => `${organization(o)}/invites`,
    () => ({ target_email: "one@example.com", send_email: false }),
  ),
  write(
    "POST .../invites/bulk (10 invites)",
    "POST",
    (o) => `${organization(o)}/invites/bulk`,
    () => Array.from({ length: 10 }, (_, index) => ({ target_email: `bulk-${index}@example.com`, send_email: false })),
  ),
  write("DELETE .../invites/:id", "DELETE", (o) => `${organization(o)}/invites/${o.inviteId}`),
  write(
    "POST .../domains",
    "POST",
    (o) => `${organization(o)}/domains`,
    (o) => ({ domain: `new-${o.organization.id}.example.com` }),
  ),
  write(
    "PATCH .../domains/:id",
    "PATCH",
    (o) => `${organization(o)}/domains/${o.domainId}`,
    () => ({ jit_provisioning_enabled: false }),
  ),
  write(
    "POST .../projects",
    "POST",
    (o) => `${organization(o)}/projects`,
    () => ({ name: "Measured project" }),
  ),
  write(
    "PATCH /api/projects/:id",
    "PATCH",
    (o) => `/api/projects/${o.project.id}`,
    () => ({ name: "Renamed" }),
  ),
  write(
    "PATCH .../members/:uuid",
    "PATCH",
    (o) => `${organization(o)}/members/${o.spareMembers[0]!.uuid}`,
    () => ({ level: MembershipLevel.admin }),
  ),
  write(
    "POST .../batch_exports",
    "POST",
    (o) => `${environment(o)}/batch_exports`,
    () => ({ ...S3_EXPORT, name: "Measured" }),
  ),
  write("POST .../batch_exports/:id/pause", "POST", (o) => `${organization(o)}/batch_exports/${o.batchExportId}/pause`),
  write("DELETE .../batch_exports/:id", "DELETE", (o) => `${environment(o)}/batch_exports/${o.batchExportId}`),
  write(
    "POST .../dashboards",
    "POST",
    (o) => `${environment(o)}/dashboards`,
    () => ({ name: "Measured" }),
  ),
  write("PATCH .../dashboards/:id", "PATCH", dashboard, () => ({ description: "Measured" })),
  write(
    "POST .../collaborators",
    "POST",
    (o) => `${dashboard(o)}/collaborators`,
    (o) => ({ user_uuid: o.spareMembers[1]!.uuid, level: 37 }),
  ),
  write(
    "PUT .../dashboards/:id/access_controls",
    "PUT",
    (o) => `${dashboard(o)}/access_controls`,
    (o) => ({
      access_level: "editor",
      organization_member: o.spareMembers[1]!.membershipId,
    }),
  ),
  write(
    "PATCH .../sharing",
    "PATCH",
    (o) => `${dashboard(o)}/sharing`,
    () => ({ enabled: true }),
  ),
  write(
    "POST /api/personal_api_keys",
    "POST",
    () => "/api/personal_api_keys",
    () => ({ label: "Measured", scopes: ["*"] }),
  ),
  write("DELETE .../members/:uuid", "DELETE", (o) => `${organization(o)}/members/${o.spareMembers[0]!.uuid}`),
  write(
    "POST .../dashboards (3 tags)",
    "POST",
    (o) => `${environment(o)}/dashboards`,
    () => ({ name: "Tagged", description: "Searched", tags: ["one", "two", "three"] }),
  ),
  write("PATCH .../dashboards/:id (name, 3 tags)", "PATCH", dashboard, () => ({
    name: "Renamed",
    tags: ["four", "five", "six"],
  })),
  write(
    "PATCH .../organizations/:id/projects/:id",
    "PATCH",
    (o) => `${organization(o)}/projects/${o.project.id}`,
    () => ({ name: "Renamed again" }),
  ),
  write(
    "POST .../webhooks",
    "POST",
    (o) => `${organization(o)}/webhooks`,
    () => ({ url: "http://receiver.test/hook", events: ["Dashboard.created"] }),
  ),
  write("DELETE .../domains/:id", "DELETE", (o) => `${organization(o)}/domains/${o.domainId}`),
];

/** The public page is HTML, not JSON: its cost is read from the headers alone. */
async function measurePublicPage(accessToken: string) {
  const response = await exports.default.fetch(new Request(`http://localhost/shared/${accessToken}`));
  await response.text();
  if (response.status !== 200) throw new Error(`/shared: ${response.status}`);
  return readCost(response.headers);
}

async function both(request: Request, small: SeededOrganization, large: SeededOrganization): Promise<Measurement> {
  const one = (o: SeededOrganization) => measure(request.method, request.path(o), o.key, request.body?.(o));
  return { label: request.label, small: await one(small), large: await one(large) };
}

/**
 * The first page of 10 and the last one, by its offset (a cold offset: the deeper, the more index
 * entries are skipped) and by the `next` link of the page before (a cursor: no entry skipped); and
 * the page before the last by the last page's `previous` link (a cursor too).
 */
async function pages(label: string, path: Request["path"], small: SeededOrganization, large: SeededOrganization) {
  const first = await both(
    get(`GET ${label}?limit=10`, (o) => `${path(o)}?limit=10`),
    small,
    large,
  );
  const lastOffset = async (o: SeededOrganization) => {
    const { body } = await api("GET", `${path(o)}?limit=1`, { key: o.key });
    return Math.max(0, (body as { count: number }).count - 10);
  };
  const smallOffset = await lastOffset(small);
  const largeOffset = await lastOffset(large);
  const last = {
    label: `GET ${label}?limit=10&offset=count-10`,
    small: await measure("GET", `${path(small)}?limit=10&offset=${smallOffset}`, small.key),
    large: await measure("GET", `${path(large)}?limit=10&offset=${largeOffset}`, large.key),
  };
  const middle = {
    label: `GET ${label}?limit=10&offset=count/2`,
    small: await measure("GET", `${path(small)}?limit=10&offset=${Math.floor((smallOffset + 10) / 2)}`, small.key),
    large: await measure("GET", `${path(large)}?limit=10&offset=${Math.floor((largeOffset + 10) / 2)}`, large.key),
  };
  // The same last page reached by the page before's `next` link, whose cursor seeks.
  const followed = async (o: SeededOrganization, offset: number) => {
    const { body } = await api("GET", `${path(o)}?limit=10&offset=${Math.max(0, offset - 10)}`, { key: o.key });
    const next = (body as { next: string | null }).next;
    const url = next ? new URL(next) : undefined;
    return measure("GET", url ? `${url.pathname}${url.search}` : `${path(o)}?limit=10&offset=${offset}`, o.key);
  };
  const viaNext = {
    label: `GET ${label} last page via next`,
    small: await followed(small, smallOffset),
    large: await followed(large, largeOffset),
  };
  // The page before the last, reached by the last page's `previous` link, whose cursor seeks back.
  const back = async (o: SeededOrganization, offset: number) => {
    const { body } = await api("GET", `${path(o)}?limit=10&offset=${offset}`, { key: o.key });
    const previous = (body as { previous: string | null }).previous;
    const url = previous ? new URL(previous) : undefined;
    return measure(
      "GET",
      url ? `${url.pathname}${url.search}` : `${path(o)}?limit=10&offset=${Math.max(0, offset - 10)}`,
      o.key,
    );
  };
  const viaPrevious = {
    label: `GET ${label} page before last via previous`,
    small: await back(small, smallOffset),
    large: await back(large, largeOffset),
  };
  return [first, last, middle, viaNext, viaPrevious];
}

/**
 * A plain member of the organization whose rules hide projects from them: their own `none` rule on
 * two projects, and a private project. Their lists are measured with their key.
 */
async function memberBehindRules(rows: SeedRows, o: SeededOrganization): Promise<SeededOrganization> {
  const member = await addMember(o.organization.id, MembershipLevel.member);
  const projects = rows.projects.filter((project) => project.organizationId === o.organization.id);
  for (const project of projects.slice(0, 2)) await grantProjectAccess(project.id!, member.membership.id, "none");
  await createProject(o.organization.id, { access_control: true });
  return { ...o, key: member.key };
}

it("every read and one write per resource, 10 vs 10,000 rows of each kind", async () => {
  const rows = emptySeedRows();
  const small = await seedOrganization(rows, SMALL);
  const large = await seedOrganization(rows, LARGE);
  seedOtherOrganizations(rows, OTHER_ORGANIZATIONS);
  await insertSeedRows(rows);

  const listed: Measurement[] = [];
  for (const [label, path] of LISTS) listed.push(...(await pages(label, path, small, large)));
  const [smallMember, largeMember] = [await memberBehindRules(rows, small), await memberBehindRules(rows, large)];
  const listedByMember: Measurement[] = [];
  for (const [label, path] of LISTS) {
    listedByMember.push(...(await pages(label, path, smallMember, largeMember)));
  }
  const read: Measurement[] = [];
  for (const request of READS) read.push(await both(request, small, large));
  for (const o of [small, large]) await api("PATCH", dashboard(o), { key: o.key, body: { tags: ["measured"] } });
  const filtered: Measurement[] = [];
  for (const request of FILTERS) filtered.push(await both(request, small, large));
  const sharing = await api("GET", `${dashboard(large)}/sharing`, { key: large.key });
  const written: Measurement[] = [];
  for (const request of WRITES) written.push(await both(request, small, large));
  const smallSharing = await api("GET", `${dashboard(small)}/sharing`, { key: small.key });
  const publicPages = [
    {
      label: "GET /shared/:access_token",
      small: await measurePublicPage((smallSharing.body as { access_token: string }).access_token),
      large: await measurePublicPage((sharing.body as { access_token: string }).access_token),
    },
  ];

  report(`Lists (${OTHER_ORGANIZATIONS} other organizations, warm key cache)`, [SMALL, LARGE], listed);
  report(
    "Lists as a member whose rules hide projects (two own `none` rules, a private project)",
    [SMALL, LARGE],
    listedByMember,
  );
  report("Retrievals", [SMALL, LARGE], [...read, ...publicPages]);
  report(
    "Dashboards and members filtered (by their indexes; a search under 3 characters along the list)",
    [SMALL, LARGE],
    filtered,
  );
  // Last, as it ends each organization: what the DELETE itself writes (its rows go in background steps).
  written.push(await both(write("DELETE /api/organizations/:id", "DELETE", organization), small, large));
  report("Writes", [SMALL, LARGE], written, { written: true });
  for (const m of [...listed, ...listedByMember, ...read, ...filtered, ...written])
    expect(m.large.queries, m.label).toBe(m.small.queries);
}, 900_000);
