// Types of check-config.mjs, for the Node-side tests.
export function configProblems(config: object): string[];
