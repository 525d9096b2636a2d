import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import * as schema from "../src/db/schema";
import worker from "../src/index";
import { api, db, setupOrganization } from "./support/harness";
import { restoreTestDoubles, useEmailTransport } from "./support/people";

afterEach(restoreTestDoubles);

describe("the queue consumer", () => {
  it("acknowledges a message whose body is not an object, and handles the rest of its batch", async () => {
    useEmailTransport();
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => Response.json({ id: "sent" }));
    const organization = await setupOrganization();
    const invite = await api("POST", `/api/organizations/${organization.organization.id}/invites`, {
      key: organization.key,
      body: { target_email: `queued-${crypto.randomUUID()}@example.com`, level: 1, send_email: true },
    });
    expect(invite.status).toBe(201);
    const batch = createMessageBatch<unknown>("invite-emails", [
      { id: "garbage", timestamp: new Date(), attempts: 1, body: "not an object" },
      { id: "invite", timestamp: new Date(), attempts: 1, body: { inviteId: invite.body.id } },
    ]);
    await worker.queue(batch as MessageBatch<unknown>, env);
    const result = await getQueueResult(batch, createExecutionContext());
    expect(result.explicitAcks.sort()).toEqual(["garbage", "invite"]);
    const [row] = await db.select().from(schema.invites).where(eq(schema.invites.id, invite.body.id));
    expect(row!.emailStatus).toBe("sent");
  });

  it("logs a batch it cannot handle (D1 out of reach) as one JSON line and retries it, never throws", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const withSession = env.DB.withSession.bind(env.DB);
    vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => {
      const session = withSession(constraint);
      vi.spyOn(session, "prepare").mockImplementation(() => {
        throw new Error("D1_ERROR: Network connection lost.");
      });
      return session;
    });
    const batch = createMessageBatch<unknown>("webhook-deliveries-dead-letters", [
      { id: "dead", timestamp: new Date(), attempts: 1, body: { deliveryId: crypto.randomUUID() } },
    ]);
    await expect(worker.queue(batch as MessageBatch<unknown>, env)).resolves.toBeUndefined();
    vi.mocked(env.DB.withSession).mockRestore();
    const result = await getQueueResult(batch, createExecutionContext());
    expect([result.explicitAcks, result.ackAll, result.retryBatch.retry]).toEqual([[], false, true]);
    const lines = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        queue: "webhook-deliveries-dead-letters",
        run_id: expect.any(String),
        task: "queue batch",
        messages: 1,
        error: expect.objectContaining({ message: "D1_ERROR: Network connection lost." }),
      }),
    ]);
  });
});
