import type { TestProject } from "vitest/node";
import { startLocalServer } from "../../scripts/local-server.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    serverUrl: string;
    apiKey: string;
  }
}

/** One fresh local server for every Node-side test file of the run. */
export default async function setup(project: TestProject) {
  const server = await startLocalServer();
  project.provide("serverUrl", server.url);
  project.provide("apiKey", server.api_key);
  return () => server.stop();
}
