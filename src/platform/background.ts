import type { Context } from "hono";
import type { AppEnv } from "./env";
import { errorFields, logLine } from "./log";

/**
 * Background work (after a response, on the cron) runs for many organizations or tasks at once:
 * one that fails must not stop the others, nor be lost silently. Each failure is one JSON line
 * for Workers Logs, naming the task and the organization, never a body or a secret.
 */
export async function runEach<T>(
  task: string,
  items: T[],
  run: (item: T) => Promise<unknown>,
  describe: (item: T) => Record<string, unknown>,
) {
  const succeeded = await settledEach(task, items, run, describe);
  return items.length - succeeded.length;
}

/** `run` over each item at once: the results of those that succeeded, each failure logged. */
export async function settledEach<T, R>(
  task: string,
  items: T[],
  run: (item: T) => Promise<R>,
  describe: (item: T) => Record<string, unknown>,
): Promise<R[]> {
  const outcomes = await Promise.allSettled(items.map(run));
  return outcomes.flatMap((outcome, index) => {
    if (outcome.status === "fulfilled") return [outcome.value];
    logLine("error", { task, ...describe(items[index]!), error: errorFields(outcome.reason) });
    return [];
  });
}

/**
 * Work left for after the response (`waitUntil`): a failure is one JSON line naming the request,
 * `task` and `fields` (a failed query's SQL, never its values), never a rejection left unhandled,
 * which the runtime would print as plain text with everything the query bound.
 */
export function afterResponse(
  c: Context<AppEnv>,
  task: string,
  work: Promise<unknown>,
  fields: Record<string, unknown> = {},
  level: "warn" | "error" = "warn",
) {
  c.executionCtx.waitUntil(
    work.catch((error: unknown) => logLine(level, { task, ...fields, error: errorFields(error) })),
  );
}

/** `runEach` over organization ids. */
export const forEachOrganization = (
  task: string,
  organizationIds: string[],
  run: (organizationId: string) => Promise<unknown>,
) => runEach(task, organizationIds, run, (organizationId) => ({ organization_id: organizationId }));

/** How long a message whose handling threw waits before its next attempt. */
const THROWN_RETRY_SECONDS = 60;

/**
 * A queue batch's messages each on its own: one whose handling throws (a secret that will not
 * open, a body it cannot read) is logged and retried alone, later, until its queue dead-letters
 * it, instead of failing the batch, which would run the others' side effects again.
 */
export async function eachMessage<T>(
  task: string,
  messages: readonly Message<T>[],
  handle: (message: Message<T>) => Promise<unknown>,
  describe: (body: T) => Record<string, unknown>,
) {
  await Promise.all(
    messages.map(async (message) => {
      try {
        await handle(message);
      } catch (error) {
        logLine("error", { task, ...describe(message.body), attempt: message.attempts, error: errorFields(error) });
        message.retry({ delaySeconds: THROWN_RETRY_SECONDS });
      }
    }),
  );
}
