CREATE TABLE "a2a_calls" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text,
	"api_key_id" text,
	"status" text NOT NULL,
	"latency_ms" integer,
	"cost_nano" bigint,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"agent_id" text NOT NULL,
	"agent_name" text NOT NULL,
	"skill" text
);
--> statement-breakpoint
CREATE TABLE "budget_actions" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"scope" text NOT NULL,
	"scope_id" text,
	"action" text NOT NULL,
	"request_id" text,
	"model" text,
	"amount_nano" bigint,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_tool_calls" (
	"id" text PRIMARY KEY NOT NULL,
	"org_id" text NOT NULL,
	"user_id" text,
	"api_key_id" text,
	"status" text NOT NULL,
	"latency_ms" integer,
	"cost_nano" bigint,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"server_id" text NOT NULL,
	"server_name" text NOT NULL,
	"tool_name" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "request_flags" (
	"request_id" text NOT NULL,
	"org_id" text NOT NULL,
	"kind" text NOT NULL,
	"category" text NOT NULL,
	"occurrences" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "request_flags_request_id_kind_category_pk" PRIMARY KEY("request_id","kind","category")
);
--> statement-breakpoint
ALTER TABLE "requests" ADD COLUMN "country" text;--> statement-breakpoint
CREATE INDEX "a2a_calls_org_time_idx" ON "a2a_calls" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "budget_actions_org_time_idx" ON "budget_actions" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "mcp_tool_calls_org_time_idx" ON "mcp_tool_calls" USING btree ("org_id","created_at");--> statement-breakpoint
CREATE INDEX "request_flags_org_time_idx" ON "request_flags" USING btree ("org_id","created_at");