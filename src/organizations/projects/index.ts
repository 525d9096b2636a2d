import { createRouter } from "../../platform/router";
import {
  createOrganizationProject,
  listOrganizationProjects,
  retrieveOrganizationProject,
} from "./projects.handlers";
import { createProject, listProjects, retrieveProject } from "./projects.routes";

export const organizationProjectsRouter = createRouter()
  .openapi(listProjects, listOrganizationProjects)
  .openapi(createProject, createOrganizationProject)
  .openapi(retrieveProject, retrieveOrganizationProject);
