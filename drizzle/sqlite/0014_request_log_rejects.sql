CREATE TABLE `request_log_rejects` (
	`request_id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`error` text NOT NULL,
	`record` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `request_log_rejects_org_time_idx` ON `request_log_rejects` (`org_id`,`created_at`);