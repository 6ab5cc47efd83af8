CREATE TABLE "fallback_chains" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"match_model" text NOT NULL,
	"steps" jsonb NOT NULL,
	"triggers" jsonb,
	"retry" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "provider_keys" ADD COLUMN "weight" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "attempts" jsonb;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "cached" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "fallback_chain_id" text;--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "cache_saved_nano" bigint;--> statement-breakpoint
ALTER TABLE "fallback_chains" ADD CONSTRAINT "fallback_chains_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "fallback_chains_org_model_idx" ON "fallback_chains" USING btree ("org_id","match_model");