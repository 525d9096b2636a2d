-- Private projects and project grants become access-control rules on the project: one way to
-- decide who sees a project. A project's rules live in its first environment, which shares its id.
INSERT INTO access_controls (id, environment_id, resource, resource_id, organization_membership_id, access_level, created_at, updated_at)
SELECT
  lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
  grants.project_id, 'project', CAST(grants.project_id AS TEXT), memberships.id, grants.level, grants.created_at, grants.created_at
FROM project_access_grants AS grants
JOIN projects ON projects.id = grants.project_id
JOIN organization_memberships AS memberships
  ON memberships.organization_id = projects.organization_id AND memberships.user_id = grants.user_id
WHERE true
ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO access_controls (id, environment_id, resource, resource_id, organization_membership_id, access_level, created_at, updated_at)
SELECT
  lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
    substr('89ab', 1 + abs(random()) % 4, 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
  projects.id, 'project', CAST(projects.id AS TEXT), NULL, 'none', projects.updated_at, projects.updated_at
FROM projects
WHERE projects.access_control = 1;
