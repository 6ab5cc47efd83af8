CREATE TABLE "organization_settings" (
	"org_id" text PRIMARY KEY NOT NULL,
	"onboarding" jsonb,
	"terms_accepted_at" timestamp with time zone,
	"terms_accepted_by" text,
	"terms_version" text,
	"body_retention_days" integer,
	"pii_redaction" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organization_settings" ADD CONSTRAINT "organization_settings_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;