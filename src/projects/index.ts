import { createRouter } from "../platform/router";
import { listProjects, retrieveProject, updateProject } from "./projects.handlers";
import { listAccessibleProjects, retrieveAccessibleProject, updateAccessibleProject } from "./projects.routes";

export const projectsRouter = createRouter()
  .openapi(listAccessibleProjects, listProjects)
  .openapi(retrieveAccessibleProject, retrieveProject)
  .openapi(updateAccessibleProject, updateProject);
