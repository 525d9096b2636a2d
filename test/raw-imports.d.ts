// Vite's `?raw` imports: a file's text (wrangler.toml, docs/), for tests that hold the code and a file together.
declare module "*?raw" {
  const text: string;
  export default text;
}
