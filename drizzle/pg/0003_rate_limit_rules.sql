CREATE TABLE "rate_limit_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"quota" double precision NOT NULL,
	"window_seconds" integer NOT NULL,
	"unit" text NOT NULL,
	"segment" text NOT NULL,
	"property" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "rate_limit_rules" ADD CONSTRAINT "rate_limit_rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rate_limit_rules_org_idx" ON "rate_limit_rules" USING btree ("org_id");