CREATE TABLE `mcp_servers` (
	`id` text PRIMARY KEY NOT NULL,
	`org_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`transport` text NOT NULL,
	`auth_kind` text NOT NULL,
	`sealed_token` text,
	`token_hint` text,
	`tool_allow` text NOT NULL,
	`tool_deny` text NOT NULL,
	`enabled` integer NOT NULL,
	`platform_server_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`org_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mcp_servers_org_name_idx` ON `mcp_servers` (`org_id`,`name`);