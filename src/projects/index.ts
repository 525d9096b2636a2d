import { createRouter } from "../platform/router";
import { deleteProject, listProjects, retrieveProject, updateProject } from "./projects.handlers";
import {
  deleteAccessibleProject,
  listAccessibleProjects,
  replaceAccessibleProject,
  retrieveAccessibleProject,
  updateAccessibleProject,
} from "./projects.routes";

export const projectsRouter = createRouter()
  .openapi(listAccessibleProjects, listProjects)
  .openapi(retrieveAccessibleProject, retrieveProject)
  .openapi(updateAccessibleProject, updateProject)
  .openapi(replaceAccessibleProject, updateProject)
  .openapi(deleteAccessibleProject, deleteProject);
