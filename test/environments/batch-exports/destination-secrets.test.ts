import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import * as schema from "../../../src/db/schema";
import { openDestination, sealDestination } from "../../../src/environments/batch-exports/destination-secrets";
import { nowIso, uuid7 } from "../../../src/platform/ids";
import { loadKeyring } from "../../../src/platform/secrets";
import worker from "../../../src/index";
import { api, db, setupOrganization } from "../../support/harness";

const S3_CONFIG = { bucket_name: "my-bucket", region: "us-east-1", prefix: "events/" };
const S3_SECRETS = { aws_access_key_id: "AKIA-SECRET-ID", aws_secret_access_key: "very-secret-access-key" };
const exportsPath = (projectId: number) => `/api/environments/${projectId}/batch_exports`;

/** The row as a database dump shows it: every column as stored, nothing opened. */
async function dumpedRow(id: string) {
  const row = await env.DB.prepare("select * from batch_exports where id = ?")
    .bind(id)
    .first<Record<string, unknown>>();
  return JSON.stringify(row);
}

async function storedRow(id: string) {
  const [row] = await db.select().from(schema.batchExports).where(eq(schema.batchExports.id, id));
  return row!;
}

async function openedConfig(id: string) {
  return openDestination(await loadKeyring(env), await storedRow(id));
}

/** An export as rows were written before secrets were encrypted, or sealed under a former key. */
async function insertExport(projectId: number, organizationId: string, sealing: "plaintext" | "former key") {
  const id = uuid7();
  const config = { ...S3_CONFIG, ...S3_SECRETS };
  const former = await loadKeyring({ SECRETS_ENCRYPTION_KEY: env.SECRETS_ENCRYPTION_OLD_KEYS! });
  const stored =
    sealing === "plaintext"
      ? { destinationConfig: config, sealedSecretsKeyId: null }
      : await sealDestination(former, id, "S3", config);
  const now = nowIso();
  await db.insert(schema.batchExports).values({
    id,
    environmentId: projectId,
    organizationId,
    name: `legacy ${sealing}`,
    destinationType: "S3",
    interval: "hour",
    createdAt: now,
    lastUpdatedAt: now,
    ...stored,
  });
  return id;
}

const runScheduledPass = () => worker.scheduled(createScheduledController({ cron: "*/10 * * * *" }), env);

describe("batch export secrets at rest", () => {
  it("stores every secret sealed: the row alone does not reveal it", async () => {
    const { project, key } = await setupOrganization();
    const created = await api("POST", exportsPath(project.id), {
      key,
      body: { name: "S3", interval: "hour", destination: { type: "S3", config: { ...S3_CONFIG, ...S3_SECRETS } } },
    });
    expect(created.status).toBe(201);

    const dump = await dumpedRow(created.body.id);
    for (const secret of Object.values(S3_SECRETS)) expect(dump).not.toContain(secret);
    expect(dump).toContain("my-bucket");
    const row = await storedRow(created.body.id);
    expect(row.destinationConfig.aws_secret_access_key).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row.sealedSecretsKeyId).toBe((await loadKeyring(env)).current.id);
    expect(await openedConfig(created.body.id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS });
  });

  it("seals each value for its own export and field: copied elsewhere, it does not open", async () => {
    const keyring = await loadKeyring(env);
    const sealed = await sealDestination(keyring, "one-export", "S3", { ...S3_CONFIG, ...S3_SECRETS });
    const copied = { id: "another-export", destinationType: "S3", destinationConfig: sealed.destinationConfig };
    await expect(openDestination(keyring, copied)).rejects.toThrow();
  });

  it("reads rows written in plaintext before, and seals them on their next write", async () => {
    const { project, organization, key } = await setupOrganization();
    const id = await insertExport(project.id, organization.id, "plaintext");

    const read = await api("GET", `${exportsPath(project.id)}/${id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body.destination.config).toEqual(S3_CONFIG);

    const patched = await api("PATCH", `${exportsPath(project.id)}/${id}`, {
      key,
      body: { destination: { config: { region: "eu-west-1" } } },
    });
    expect(patched.status).toBe(200);
    const dump = await dumpedRow(id);
    for (const secret of Object.values(S3_SECRETS)) expect(dump).not.toContain(secret);
    expect(await openedConfig(id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS, region: "eu-west-1" });
  });

  it("re-seals plaintext and former-key rows in the scheduled pass, secrets kept", async () => {
    const { project, organization } = await setupOrganization();
    const plaintext = await insertExport(project.id, organization.id, "plaintext");
    const formerKey = await insertExport(project.id, organization.id, "former key");
    const current = (await loadKeyring(env)).current.id;
    expect((await storedRow(formerKey)).sealedSecretsKeyId).not.toBe(current);

    await runScheduledPass();

    for (const id of [plaintext, formerKey]) {
      const row = await storedRow(id);
      expect(row.sealedSecretsKeyId).toBe(current);
      expect(row.destinationConfig.aws_access_key_id).toMatch(new RegExp(`^enc:v1:${current}:`));
      for (const secret of Object.values(S3_SECRETS)) expect(await dumpedRow(id)).not.toContain(secret);
      expect(await openedConfig(id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS });
    }
    expect(
      await db.$count(schema.batchExports, eq(schema.batchExports.sealedSecretsKeyId, current)),
    ).toBeGreaterThanOrEqual(2);
  });

  it("opens a former key's secrets on PATCH and writes them back under the current key", async () => {
    const { project, organization, key } = await setupOrganization();
    const id = await insertExport(project.id, organization.id, "former key");

    const patched = await api("PATCH", `${exportsPath(project.id)}/${id}`, { key, body: { name: "rotated" } });

    expect(patched.status).toBe(200);
    expect((await storedRow(id)).sealedSecretsKeyId).toBe((await loadKeyring(env)).current.id);
    expect(await openedConfig(id)).toEqual({ ...S3_CONFIG, ...S3_SECRETS });
  });
});
