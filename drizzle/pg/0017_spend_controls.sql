CREATE TABLE "budget_limits" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"scope_kind" text NOT NULL,
	"scope_id" text NOT NULL,
	"metric" text NOT NULL,
	"amount" bigint NOT NULL,
	"period" text NOT NULL,
	"period_seconds" integer NOT NULL,
	"action" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "budget_notices" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"limit_id" text,
	"scope_kind" text,
	"scope_id" text,
	"metric" text,
	"window_start" timestamp with time zone,
	"threshold" integer,
	"spent" bigint,
	"amount" bigint,
	"message" text,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "downgrade_mappings" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"from_model" text NOT NULL,
	"to_model" text NOT NULL,
	"at_percent" integer,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "model_prices" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"input_nano_per_mtok" bigint NOT NULL,
	"output_nano_per_mtok" bigint NOT NULL,
	"cache_read_nano_per_mtok" bigint,
	"cache_write_nano_per_mtok" bigint,
	"max_output_tokens" integer,
	"per_request_nano" bigint,
	"effective_from" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "organization_settings" ADD COLUMN "budget_timezone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "organization_settings" ADD COLUMN "budget_week_start" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "organization_settings" ADD COLUMN "budget_month_start_day" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "organization_settings" ADD COLUMN "alert_thresholds" jsonb;--> statement-breakpoint
ALTER TABLE "organization_settings" ADD COLUMN "alert_channels" jsonb;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "member_id" text;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "price_source" text;--> statement-breakpoint
ALTER TABLE "budget_limits" ADD CONSTRAINT "budget_limits_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budget_notices" ADD CONSTRAINT "budget_notices_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "downgrade_mappings" ADD CONSTRAINT "downgrade_mappings_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "model_prices" ADD CONSTRAINT "model_prices_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "budget_limits_identity_idx" ON "budget_limits" USING btree ("org_id","kind","scope_kind","scope_id","metric","period","period_seconds");--> statement-breakpoint
CREATE UNIQUE INDEX "budget_notices_once_idx" ON "budget_notices" USING btree ("limit_id","scope_id","window_start","threshold");--> statement-breakpoint
CREATE INDEX "budget_notices_org_time_idx" ON "budget_notices" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "downgrade_mappings_org_from_idx" ON "downgrade_mappings" USING btree ("org_id","from_model");--> statement-breakpoint
CREATE UNIQUE INDEX "model_prices_identity_idx" ON "model_prices" USING btree ("org_id","provider","model","effective_from");