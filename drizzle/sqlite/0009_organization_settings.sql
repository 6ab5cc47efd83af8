CREATE TABLE `organization_settings` (
	`org_id` text PRIMARY KEY NOT NULL,
	`onboarding` text,
	`terms_accepted_at` integer,
	`terms_accepted_by` text,
	`terms_version` text,
	`body_retention_days` integer,
	`pii_redaction` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
