ALTER TABLE `organization_settings` ADD `request_retention_days` integer;--> statement-breakpoint
CREATE INDEX `request_bodies_org_time_idx` ON `request_bodies` (`org_id`,`created_at`);