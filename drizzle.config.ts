import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  // wrangler applies flat NNNN_name.sql files; drizzle-kit's journal stays in migrations/meta.
  migrations: { prefix: "index" },
});
