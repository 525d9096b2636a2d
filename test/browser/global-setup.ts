import type { TestProject } from "vitest/node";
import { startLocalServer } from "../../scripts/local-server.mjs";
import { startMailCatcher } from "./mail-catcher";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    apiKey: string;
    mailUrl: string;
    statePath: string;
  }
}

/**
 * One fresh local server for every Node-side test file of the run, its e-mail sent to a catcher
 * of its own that the tests read.
 */
export default async function setup(project: TestProject) {
  const mail = await startMailCatcher();
  const server = await startLocalServer({ vars: { EMAIL_TRANSPORT_URL: `${mail.url}/send` } });
  project.provide("serverUrl", server.url);
  project.provide("apiKey", server.api_key);
  project.provide("mailUrl", mail.url);
  project.provide("statePath", server.persistTo);
  return async () => {
    await server.stop();
    await mail.close();
  };
}
