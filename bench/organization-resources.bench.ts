import { expect, it } from "vitest";
import { addMember, api, setupOrganization } from "../test/support/harness";
import { measure, report, type Measurement } from "./report";

const S3_EXPORT = {
  interval: "hour",
  destination: { type: "S3", config: { bucket_name: "bucket", region: "us-east-1", prefix: "events/" } },
};

async function arrange(count: number) {
  const setup = await setupOrganization();
  let exportId = "";
  for (let index = 0; index < count; index += 1) {
    const created = await api("POST", `/api/environments/${setup.project.id}/batch_exports`, {
      key: setup.key,
      body: { ...S3_EXPORT, name: `Export ${index}` },
    });
    exportId = created.body.id;
    await api("POST", `/api/organizations/${setup.organization.id}/domains`, {
      key: setup.key,
      body: { domain: `d${index}-${setup.organization.id.slice(0, 8)}.example.com` },
    });
    await api("POST", `/api/organizations/${setup.organization.id}/invites`, {
      key: setup.key,
      body: { target_email: `invitee${index}@example.com`, send_email: false },
    });
    if (index > 0) await addMember(setup.organization.id, 1);
  }
  return { ...setup, exportId };
}

it("members, invites, domains and batch exports", async () => {
  const small = await arrange(1);
  const large = await arrange(50);
  const requests: [string, string, (o: typeof small) => string][] = [
    ["GET /api/organizations/:id/members", "GET", (o) => `/api/organizations/${o.organization.id}/members`],
    [
      "GET /api/organizations/:id/members?limit=2",
      "GET",
      (o) => `/api/organizations/${o.organization.id}/members?limit=2`,
    ],
    ["GET /api/organizations/:id/invites", "GET", (o) => `/api/organizations/${o.organization.id}/invites`],
    [
      "GET /api/organizations/:id/invites?limit=2",
      "GET",
      (o) => `/api/organizations/${o.organization.id}/invites?limit=2`,
    ],
    ["GET /api/organizations/:id/domains", "GET", (o) => `/api/organizations/${o.organization.id}/domains`],
    [
      "GET /api/organizations/:id/domains?limit=2",
      "GET",
      (o) => `/api/organizations/${o.organization.id}/domains?limit=2`,
    ],
    ["GET /api/organizations/:id/batch_exports", "GET", (o) => `/api/organizations/${o.organization.id}/batch_exports`],
    [
      "GET /api/organizations/:id/batch_exports?limit=2",
      "GET",
      (o) => `/api/organizations/${o.organization.id}/batch_exports?limit=2`,
    ],
    ["GET /api/environments/:id/batch_exports", "GET", (o) => `/api/environments/${o.project.id}/batch_exports`],
    [
      "GET /api/environments/:id/batch_exports?limit=2",
      "GET",
      (o) => `/api/environments/${o.project.id}/batch_exports?limit=2`,
    ],
    [
      "POST .../batch_exports/:id/pause",
      "POST",
      (o) => `/api/organizations/${o.organization.id}/batch_exports/${o.exportId}/pause`,
    ],
  ];
  const measurements: Measurement[] = [];
  for (const [label, method, path] of requests) {
    measurements.push({
      label,
      small: await measure(method, path(small), small.key),
      large: await measure(method, path(large), large.key),
    });
  }
  report("Organization resources (warm key cache)", [1, 50], measurements);
  for (const m of measurements) expect(m.large.queries, m.label).toBe(m.small.queries);
  // Some two hundred requests to arrange: more than the default 5 s on a loaded machine.
}, 60_000);
