CREATE TABLE `request_feedback` (
	`request_id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`rating` real NOT NULL,
	`actor_id` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `requests` ADD `cost_note` text;