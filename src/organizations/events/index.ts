import { createRouter } from "../../platform/router";
import { listOrganizationEvents } from "./events.handlers";
import { listEvents } from "./events.routes";

export const organizationEventsRouter = createRouter().openapi(listEvents, listOrganizationEvents);
