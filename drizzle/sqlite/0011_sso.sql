CREATE TABLE `sso_configs` (
	`org_id` text PRIMARY KEY NOT NULL,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`sealed_client_secret` text NOT NULL,
	`client_secret_hint` text NOT NULL,
	`domain` text,
	`domain_challenge` text,
	`domain_verified_at` integer,
	`enforced` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
