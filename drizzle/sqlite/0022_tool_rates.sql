CREATE TABLE `tool_rates` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`server_id` text NOT NULL,
	`tool` text NOT NULL,
	`usd_nano_per_call` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tool_rates_identity_idx` ON `tool_rates` (`org_id`,`server_id`,`tool`);