CREATE TABLE "access_defaults" (
	"org_id" text NOT NULL,
	"resource_kind" text NOT NULL,
	"effect" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "access_defaults_org_id_resource_kind_pk" PRIMARY KEY("org_id","resource_kind")
);
--> statement-breakpoint
CREATE TABLE "access_rules" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"subject_kind" text NOT NULL,
	"subject_id" text NOT NULL,
	"resource_kind" text NOT NULL,
	"resource_id" text NOT NULL,
	"effect" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "access_defaults" ADD CONSTRAINT "access_defaults_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "access_rules" ADD CONSTRAINT "access_rules_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_rules_org_idx" ON "access_rules" USING btree ("org_id");