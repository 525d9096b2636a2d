// The part of `node:async_hooks` the Workers runtime provides under the `nodejs_als` flag
// (wrangler.toml), typed here rather than through @types/node, whose globals are Node's.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, callback: () => R): R;
    getStore(): T | undefined;
  }
}
