CREATE TABLE "request_bodies" (
	"request_id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"request_body" text NOT NULL,
	"response_body" text,
	"truncated" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
