import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** An e-mail as the Worker's transport posts it (`src/platform/email-transport.ts`). */
export type CaughtEmail = { to: string; subject: string; text: string };

/**
 * The local server's e-mail transport: `POST /send` keeps the e-mail and answers 200, as Resend
 * would; `GET /messages` lists what was kept, so that a test in another process can read its
 * e-mails. Nothing leaves the machine.
 */
export async function startMailCatcher() {
  const caught: CaughtEmail[] = [];
  const server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/messages") {
      response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(caught));
      return;
    }
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    request.on("end", () => {
      if (request.method === "POST" && request.url === "/send") caught.push(JSON.parse(body) as CaughtEmail);
      response.writeHead(request.method === "POST" ? 200 : 404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
