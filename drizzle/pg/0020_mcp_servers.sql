CREATE TABLE "mcp_servers" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"transport" text NOT NULL,
	"auth_kind" text NOT NULL,
	"sealed_token" text,
	"token_hint" text,
	"tool_allow" jsonb NOT NULL,
	"tool_deny" jsonb NOT NULL,
	"enabled" boolean NOT NULL,
	"platform_server_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mcp_servers" ADD CONSTRAINT "mcp_servers_org_id_organizations_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_org_name_idx" ON "mcp_servers" USING btree ("org_id","name");