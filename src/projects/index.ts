import { createRouter } from "../platform/router";
import { deleteProject, listProjects, retrieveProject, updateProject } from "./projects.handlers";
import {
  deleteAccessibleProject,
  listAccessibleProjects,
  retrieveAccessibleProject,
  updateAccessibleProject,
} from "./projects.routes";

export const projectsRouter = createRouter()
  .openapi(listAccessibleProjects, listProjects)
  .openapi(retrieveAccessibleProject, retrieveProject)
  .openapi(updateAccessibleProject, updateProject)
  .openapi(deleteAccessibleProject, deleteProject);
