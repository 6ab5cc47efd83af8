CREATE TABLE `request_scores` (
	`request_id` text NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`value` real NOT NULL,
	`actor_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`request_id`, `name`)
);
--> statement-breakpoint
CREATE INDEX `request_scores_org_idx` ON `request_scores` (`org_id`,`name`);--> statement-breakpoint
CREATE TABLE `session_feedback` (
	`org_id` text NOT NULL,
	`session_id` text NOT NULL,
	`rating` real NOT NULL,
	`actor_id` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `session_id`)
);
--> statement-breakpoint
CREATE TABLE `session_tags` (
	`org_id` text NOT NULL,
	`session_id` text NOT NULL,
	`tag` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`org_id`, `session_id`, `tag`)
);
