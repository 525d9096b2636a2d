export { resourceAccessControlsRouter } from "./resource-access-controls";
