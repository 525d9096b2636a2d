import { createRouter } from "../platform/router";
import {
  changeOrganization,
  deleteProject,
  listProjects,
  retrieveProject,
  updateProject,
} from "./accessible-projects.handlers";
import {
  changeProjectOrganization,
  createProjectInCurrentOrganization,
  deleteAccessibleProject,
  listAccessibleProjects,
  replaceAccessibleProject,
  retrieveAccessibleProject,
  updateAccessibleProject,
} from "./accessible-projects.routes";
import { deleteCallerEnvironment, retrieveCallerEnvironment, updateCallerEnvironment } from "./environments.handlers";
import { deleteEnvironment, replaceEnvironment, retrieveEnvironment, updateEnvironment } from "./environments.routes";
import {
  createOrganizationProject,
  deleteOrganizationProject,
  listOrganizationProjects,
  retrieveOrganizationProject,
  updateOrganizationProject,
} from "./organization-projects.handlers";
import {
  createProject,
  deleteProject as deleteOrganizationProjectRoute,
  listProjects as listOrganizationProjectsRoute,
  replaceProject,
  retrieveProject as retrieveOrganizationProjectRoute,
  updateProject as updateOrganizationProjectRoute,
} from "./organization-projects.routes";

/**
 * A project is served at three paths, as PostHog serves it: in its organization
 * (`/api/organizations/:organization_id/projects`), among the caller's projects (`/api/projects`),
 * and as its one environment (`/api/environments/:project_id`). One schema and one set of queries.
 */
export const organizationProjectsRouter = createRouter()
  .openapi(listOrganizationProjectsRoute, listOrganizationProjects)
  .openapi(createProject, createOrganizationProject)
  .openapi(retrieveOrganizationProjectRoute, retrieveOrganizationProject)
  .openapi(updateOrganizationProjectRoute, updateOrganizationProject)
  .openapi(replaceProject, updateOrganizationProject)
  .openapi(deleteOrganizationProjectRoute, deleteOrganizationProject);

export const projectsRouter = createRouter()
  .openapi(listAccessibleProjects, listProjects)
  .openapi(createProjectInCurrentOrganization, createOrganizationProject)
  .openapi(retrieveAccessibleProject, retrieveProject)
  .openapi(updateAccessibleProject, updateProject)
  .openapi(replaceAccessibleProject, updateProject)
  .openapi(deleteAccessibleProject, deleteProject)
  .openapi(changeProjectOrganization, changeOrganization);

export const environmentRouter = createRouter()
  .openapi(retrieveEnvironment, retrieveCallerEnvironment)
  .openapi(updateEnvironment, updateCallerEnvironment)
  .openapi(replaceEnvironment, updateCallerEnvironment)
  .openapi(deleteEnvironment, deleteCallerEnvironment);
