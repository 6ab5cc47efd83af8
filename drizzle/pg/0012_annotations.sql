CREATE TABLE "request_scores" (
	"request_id" text NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"value" double precision NOT NULL,
	"actor_id" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "request_scores_request_id_name_pk" PRIMARY KEY("request_id","name")
);
--> statement-breakpoint
CREATE TABLE "session_feedback" (
	"org_id" text NOT NULL,
	"session_id" text NOT NULL,
	"rating" double precision NOT NULL,
	"actor_id" text,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "session_feedback_org_id_session_id_pk" PRIMARY KEY("org_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "session_tags" (
	"org_id" text NOT NULL,
	"session_id" text NOT NULL,
	"tag" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "session_tags_org_id_session_id_tag_pk" PRIMARY KEY("org_id","session_id","tag")
);
--> statement-breakpoint
CREATE INDEX "request_scores_org_idx" ON "request_scores" USING btree ("org_id","name");