CREATE TABLE `provider_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`provider` text NOT NULL,
	`name` text NOT NULL,
	`base_url` text,
	`sealed_secret` text NOT NULL,
	`hint` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `provider_keys_org_provider_idx` ON `provider_keys` (`org_id`,`provider`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `provider_key_id` text REFERENCES provider_keys(id);