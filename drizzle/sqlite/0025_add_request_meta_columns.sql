ALTER TABLE `requests` ADD `downgraded_from` text;--> statement-breakpoint
ALTER TABLE `requests` ADD `credits_remaining_nano` integer;