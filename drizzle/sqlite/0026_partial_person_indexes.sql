DROP INDEX `requests_org_user_time_idx`;--> statement-breakpoint
DROP INDEX `requests_org_customer_time_idx`;--> statement-breakpoint
CREATE INDEX `requests_org_user_time_idx` ON `requests` (`org_id`,`user_id`,`created_at`) WHERE "requests"."user_id" is not null;--> statement-breakpoint
CREATE INDEX `requests_org_customer_time_idx` ON `requests` (`org_id`,`customer_id`,`created_at`) WHERE "requests"."customer_id" is not null;