CREATE TABLE `budget_limits` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`scope_kind` text NOT NULL,
	`scope_id` text NOT NULL,
	`metric` text NOT NULL,
	`amount` integer NOT NULL,
	`period` text NOT NULL,
	`period_seconds` integer NOT NULL,
	`action` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `budget_limits_identity_idx` ON `budget_limits` (`org_id`,`kind`,`scope_kind`,`scope_id`,`metric`,`period`,`period_seconds`);--> statement-breakpoint
CREATE TABLE `budget_notices` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`kind` text NOT NULL,
	`limit_id` text,
	`scope_kind` text,
	`scope_id` text,
	`metric` text,
	`window_start` integer,
	`threshold` integer,
	`spent` integer,
	`amount` integer,
	`message` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `budget_notices_once_idx` ON `budget_notices` (`limit_id`,`scope_id`,`window_start`,`threshold`);--> statement-breakpoint
CREATE INDEX `budget_notices_org_time_idx` ON `budget_notices` (`org_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `downgrade_mappings` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`from_model` text NOT NULL,
	`to_model` text NOT NULL,
	`at_percent` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `downgrade_mappings_org_from_idx` ON `downgrade_mappings` (`org_id`,`from_model`);--> statement-breakpoint
CREATE TABLE `model_prices` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`input_nano_per_mtok` integer NOT NULL,
	`output_nano_per_mtok` integer NOT NULL,
	`cache_read_nano_per_mtok` integer,
	`cache_write_nano_per_mtok` integer,
	`max_output_tokens` integer,
	`per_request_nano` integer,
	`effective_from` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `model_prices_identity_idx` ON `model_prices` (`org_id`,`provider`,`model`,`effective_from`);--> statement-breakpoint
ALTER TABLE `organization_settings` ADD `budget_timezone` text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE `organization_settings` ADD `budget_week_start` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `organization_settings` ADD `budget_month_start_day` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `organization_settings` ADD `alert_thresholds` text;--> statement-breakpoint
ALTER TABLE `organization_settings` ADD `alert_channels` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `member_id` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `price_source` text;