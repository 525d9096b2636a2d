import { build } from "esbuild";
const r = await build({
  entryPoints: ["src/index.ts"],
  alias: { zod: "./aliases/zod.js", "zod/v4": "./aliases/zod.js", "zod/v4/core": "./aliases/zod-core.js" },
  bundle: true,
  minify: true,
  format: "esm",
  platform: "neutral",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["module", "main"],
  metafile: true,
  write: false,
  external: ["cloudflare:*", "node:*"],
  outfile: "/tmp/out.js",
  loader: { ".sql": "text", ".md": "text", ".html": "text" },
});
const out = Object.values(r.metafile.outputs)[0];
const pkg = process.argv[2];
const files = Object.entries(out.inputs)
  .filter(([f]) => f.includes(pkg))
  .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput);
console.log(
  files
    .slice(0, 30)
    .map(([f, v]) => `${(v.bytesInOutput / 1024).toFixed(1)}\t${f.replace(/.*node_modules\//, "")}`)
    .join("\n"),
);
