CREATE TABLE `server_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`sealed` text NOT NULL,
	`created_at` integer NOT NULL
);
