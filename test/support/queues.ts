import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import worker from "../../src/index";
import wranglerToml from "../../wrangler.toml?raw";

/**
 * One message on `queue` handed to the consumer as its `attempt`-th attempt: how the consumer
 * answered Queues, with the delay of its retry (which the test pool's result does not keep).
 */
export async function consumeAttempt<Body>(queue: string, body: Body, attempt: number) {
  const batch = createMessageBatch<Body>(queue, [{ id: "message", timestamp: new Date(), attempts: attempt, body }]);
  const retry = vi.spyOn(batch.messages[0]!, "retry");
  await worker.queue(batch, env);
  const result = await getQueueResult(batch, createExecutionContext());
  return { ...result, retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds };
}

/**
 * A message and its duplicate on the dead-letter queue `queue`: whether the consumer acked them
 * all, and the warnings it logged, as JSON.
 */
export async function consumeDeadLetter<Body>(queue: string, body: Body) {
  const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
  const batch = createMessageBatch<Body>(queue, [
    { id: "dead", timestamp: new Date(), attempts: 1, body },
    { id: "duplicate", timestamp: new Date(), attempts: 1, body },
  ]);
  await worker.queue(batch, env);
  const { ackAll } = await getQueueResult(batch, createExecutionContext());
  return { ackAll, warnings: warnings.mock.calls.map(([line]) => JSON.parse(String(line))) };
}

/** The consumer of `queue` lets Queues make `attempts` attempts, then moves the message to `deadLetters`. */
export function expectAttemptsBeforeDeadLetters(queue: string, attempts: number, deadLetters: string) {
  expect(wranglerToml).toMatch(
    new RegExp(`queue = "${queue}"\\n(.+\\n)*?max_retries = ${attempts - 1}\\ndead_letter_queue = "${deadLetters}"`),
  );
}

/** The message consumed as each of `attempts`, each retried: the delays of its retries. */
export async function retryDelays<Body>(queue: string, body: Body, attempts: number[]) {
  const delays: (number | undefined)[] = [];
  for (const attempt of attempts) {
    const result = await consumeAttempt(queue, body, attempt);
    expect(
      result.retryMessages.map((message) => message.msgId),
      `attempt ${attempt}`,
    ).toEqual(["message"]);
    delays.push(result.retryDelay);
  }
  return delays;
}

/** Attempt numbers `from` to `to`. */
export const attemptsFrom = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);
