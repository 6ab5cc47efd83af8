ALTER TABLE "requests" ADD COLUMN "downgraded_from" text;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "credits_remaining_nano" bigint;