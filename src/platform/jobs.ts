/**
 * Background work too large for one invocation is done in bounded steps, one message of the
 * `BACKGROUND_JOBS` queue per step: each step does its share, records how far it went, and sends
 * the message of the next step. Steps are at-least-once: one that runs twice finds its share
 * recorded and does nothing (see each job).
 */
export type BackgroundJob =
  /** Writes part `part` of an activity-log export. */
  | { kind: "export_part"; exportId: string; part: number }
  /** Deletes a bounded batch of a project's rows (scheduled by its DELETE), or the project once none is left. */
  | { kind: "delete_project"; projectId: number }
  /** The same for an organization: a bounded batch of its rows, its emptied projects, then itself. */
  | { kind: "delete_organization"; organizationId: string }
  /** The same for a webhook: a bounded batch of its deliveries, then itself. */
  | { kind: "delete_webhook"; webhookId: string }
  /**
   * Sends again a webhook's next failed deliveries created in [since, until), after `after` (their
   * creation time and id).
   */
  | {
      kind: "recover_deliveries";
      webhookId: string;
      since: string;
      until: string;
      after: { createdAt: string; id: string } | null;
    };

/** What a step tells the consumer: done (ack), or to be run again after `delaySeconds`. */
export type StepOutcome = { retryAfterSeconds?: number };
