-- Organizations that existed before slugs: a slug from the name (spaces and common punctuation
-- become hyphens; the code's own slugify is stricter for new organizations). Where two names
-- give the same slug, later ones get a suffix from their random id, so that the unique index
-- of the next migration can be created whatever the names were.
UPDATE organizations SET slug = coalesce(nullif(trim(replace(replace(replace(replace(replace(replace(replace(replace(
  lower(trim(name)), ' ', '-'), '_', '-'), '.', '-'), ',', '-'), '/', '-'), '&', '-'), '''', '-'), '--', '-'), '-'), ''),
  'organization')
WHERE slug = '';
--> statement-breakpoint
UPDATE organizations SET slug = slug || '-' || substr(replace(id, '-', ''), -12)
WHERE EXISTS (
  SELECT 1 FROM organizations AS earlier
  WHERE earlier.slug = organizations.slug
    AND (earlier.created_at < organizations.created_at
      OR (earlier.created_at = organizations.created_at AND earlier.id < organizations.id))
);
--> statement-breakpoint
-- member_count is kept by triggers, so that every way a membership is written (creating an
-- organization, joining by invite, leaving, removal, cascades) keeps it exact, and reading it
-- costs one row, not one per member.
UPDATE organizations SET member_count = (
  SELECT count(*) FROM organization_memberships WHERE organization_memberships.organization_id = organizations.id
);
--> statement-breakpoint
CREATE TRIGGER organization_member_count_on_join AFTER INSERT ON organization_memberships
BEGIN
  UPDATE organizations SET member_count = member_count + 1 WHERE id = NEW.organization_id;
END;
--> statement-breakpoint
CREATE TRIGGER organization_member_count_on_leave AFTER DELETE ON organization_memberships
BEGIN
  UPDATE organizations SET member_count = member_count - 1 WHERE id = OLD.organization_id;
END;
