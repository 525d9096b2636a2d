// Types of local-server.mjs, for the Node-side tests.
export type LocalServer = {
  url: string;
  api_key: string;
  organization_id: string;
  project_id: number;
  user: { uuid: string; email: string };
  /** The server's D1/KV state folder. */
  persistTo: string;
  stop(): Promise<void>;
};

export function startLocalServer(options?: { vars?: Record<string, string> }): Promise<LocalServer>;

export function localVars(directory: string, vars?: Record<string, string>): string[];
