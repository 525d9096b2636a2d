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
  const outcomes = await Promise.allSettled(items.map(run));
  outcomes.forEach((outcome, index) => {
    if (outcome.status === "fulfilled") return;
    logLine("error", { task, ...describe(items[index]!), error: errorFields(outcome.reason) });
  });
  return outcomes.filter((outcome) => outcome.status === "rejected").length;
}

/** `runEach` over organization ids. */
export const forEachOrganization = (
  task: string,
  organizationIds: string[],
  run: (organizationId: string) => Promise<unknown>,
) => runEach(task, organizationIds, run, (organizationId) => ({ organization_id: organizationId }));
