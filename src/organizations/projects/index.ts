import { createRouter } from "../../platform/router";
import {
  createOrganizationProject,
  listOrganizationProjects,
  retrieveOrganizationProject,
  updateOrganizationProject,
} from "./projects.handlers";
import { createProject, listProjects, retrieveProject, updateProject } from "./projects.routes";

export const organizationProjectsRouter = createRouter()
  .openapi(listProjects, listOrganizationProjects)
  .openapi(createProject, createOrganizationProject)
  .openapi(retrieveProject, retrieveOrganizationProject)
  .openapi(updateProject, updateOrganizationProject);
