// Types of endpoint-reference.mjs, for the test that keeps docs/endpoints.md current.
export function renderEndpointReference(document: object): string;
