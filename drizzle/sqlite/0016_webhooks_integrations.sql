CREATE TABLE `integrations` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`type` text NOT NULL,
	`active` integer NOT NULL,
	`settings` text NOT NULL,
	`sealed_secrets` text NOT NULL,
	`secret_hints` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `integrations_org_type_idx` ON `integrations` (`org_id`,`type`);--> statement-breakpoint
CREATE TABLE `outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text,
	`integration_id` text,
	`org_id` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`last_http_status` integer,
	`last_error` text,
	`last_attempt_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`integration_id`) REFERENCES `integrations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `outbox_due_idx` ON `outbox` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `outbox_webhook_idx` ON `outbox` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`destination` text NOT NULL,
	`events` text NOT NULL,
	`sample_rate` integer NOT NULL,
	`property_filters` text NOT NULL,
	`include_data` integer NOT NULL,
	`sealed_secret` text NOT NULL,
	`secret_prefix` text NOT NULL,
	`disabled_at` integer,
	`dropped_events` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhooks_org_idx` ON `webhooks` (`org_id`);--> statement-breakpoint
ALTER TABLE `requests` ADD `customer_id` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `stripe_customer_id` text;--> statement-breakpoint
CREATE INDEX `requests_org_customer_time_idx` ON `requests` (`org_id`,`customer_id`,`created_at`);