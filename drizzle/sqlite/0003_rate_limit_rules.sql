CREATE TABLE `rate_limit_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`quota` real NOT NULL,
	`window_seconds` integer NOT NULL,
	`unit` text NOT NULL,
	`segment` text NOT NULL,
	`property` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `rate_limit_rules_org_idx` ON `rate_limit_rules` (`org_id`);