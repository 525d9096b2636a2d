import { createRouter } from "../platform/router";
import { listProjects, retrieveProject } from "./projects.handlers";
import { listAccessibleProjects, retrieveAccessibleProject } from "./projects.routes";

export const projectsRouter = createRouter()
  .openapi(listAccessibleProjects, listProjects)
  .openapi(retrieveAccessibleProject, retrieveProject);
