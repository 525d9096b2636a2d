import { createRouter } from "../../platform/router";
import {
  createOrganizationProject,
  deleteOrganizationProject,
  listOrganizationProjects,
  retrieveOrganizationProject,
  updateOrganizationProject,
} from "./projects.handlers";
import {
  createProject,
  deleteProject,
  listProjects,
  replaceProject,
  retrieveProject,
  updateProject,
} from "./projects.routes";

export const organizationProjectsRouter = createRouter()
  .openapi(listProjects, listOrganizationProjects)
  .openapi(createProject, createOrganizationProject)
  .openapi(retrieveProject, retrieveOrganizationProject)
  .openapi(updateProject, updateOrganizationProject)
  .openapi(replaceProject, updateOrganizationProject)
  .openapi(deleteProject, deleteOrganizationProject);
