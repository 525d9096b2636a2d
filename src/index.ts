import { createApp } from "./app";

export { ApiKeyRateLimiter } from "./platform/auth/rate-limit";

export default createApp();
