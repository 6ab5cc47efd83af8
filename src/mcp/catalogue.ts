import type { McpTransport } from './client'

/**
 * The platform catalogue: well-known public MCP servers an organisation can switch on by their id,
 * kept here as data so that it is there air-gapped and nothing is fetched to show it. An entry becomes
 * an ordinary registration when enabled (named by its id, which is a valid tool prefix); whether gw may
 * reach it is still the egress policy's decision.
 */
export interface PlatformServer {
  id: string
  name: string
  url: string
  transport: McpTransport
  /** `bearer`: the server needs a token (the organisation's own), given when it is enabled. */
  auth: 'none' | 'bearer'
  description: string
  docs: string
}

export const PLATFORM_SERVERS: readonly PlatformServer[] = [
  {
    id: 'github',
    name: 'GitHub',
    url: 'https://api.githubcopilot.com/mcp/',
    transport: 'streamable_http',
    auth: 'bearer',
    description: "GitHub's repositories, issues, pull requests and actions; a personal access token as the bearer token",
    docs: 'https://github.com/github/github-mcp-server',
  },
  {
    id: 'stripe',
    name: 'Stripe',
    url: 'https://mcp.stripe.com',
    transport: 'streamable_http',
    auth: 'bearer',
    description: "Stripe's API and documentation; a restricted API key as the bearer token",
    docs: 'https://docs.stripe.com/mcp',
  },
  {
    id: 'huggingface',
    name: 'Hugging Face',
    url: 'https://huggingface.co/mcp',
    transport: 'streamable_http',
    auth: 'bearer',
    description: 'Models, datasets, Spaces and papers on the Hugging Face Hub; an access token as the bearer token',
    docs: 'https://huggingface.co/settings/mcp',
  },
  {
    id: 'context7',
    name: 'Context7',
    url: 'https://mcp.context7.com/mcp',
    transport: 'streamable_http',
    auth: 'none',
    description: "Libraries' current documentation and code examples, by library and version",
    docs: 'https://github.com/upstash/context7',
  },
  {
    id: 'deepwiki',
    name: 'DeepWiki',
    url: 'https://mcp.deepwiki.com/mcp',
    transport: 'streamable_http',
    auth: 'none',
    description: "Questions answered from public GitHub repositories' generated documentation",
    docs: 'https://docs.devin.ai/work-with-devin/deepwiki-mcp',
  },
  {
    id: 'cloudflare-docs',
    name: 'Cloudflare documentation',
    url: 'https://docs.mcp.cloudflare.com/mcp',
    transport: 'streamable_http',
    auth: 'none',
    description: "Search of Cloudflare's developer documentation",
    docs: 'https://github.com/cloudflare/mcp-server-cloudflare',
  },
]

export const platformServer = (id: string): PlatformServer | undefined => PLATFORM_SERVERS.find((entry) => entry.id === id)
