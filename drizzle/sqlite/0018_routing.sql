CREATE TABLE `fallback_chains` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`match_model` text NOT NULL,
	`steps` text NOT NULL,
	`triggers` text,
	`retry` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `fallback_chains_org_model_idx` ON `fallback_chains` (`org_id`,`match_model`);--> statement-breakpoint
ALTER TABLE `provider_keys` ADD `weight` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `requests` ADD `attempts` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `cached` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `requests` ADD `fallback_chain_id` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `cache_saved_nano` integer;