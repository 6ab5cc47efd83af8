CREATE TABLE "request_feedback" (
	"request_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"rating" double precision NOT NULL,
	"actor_id" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "cost_note" text;