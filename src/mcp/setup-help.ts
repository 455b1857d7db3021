/**
 * How to plug `gw mcp` into MCP clients. Printed by `gw mcp --help` and copied verbatim into the
 * README (a test keeps the two equal).
 */
export const MCP_SETUP = `Claude Code:
  claude mcp add gw --env GW_BEARER_TOKEN=<token> --env GW_AGENT_ID=claude-code \\
    --env GW_BASE_URL=http://127.0.0.1:8080 -- /path/to/gw mcp

Claude Desktop (claude_desktop_config.json), and most other MCP clients (Cursor's mcp.json, ...):
  {
    "mcpServers": {
      "gw": {
        "command": "/path/to/gw",
        "args": ["mcp"],
        "env": {
          "GW_BEARER_TOKEN": "<token>",
          "GW_AGENT_ID": "claude-desktop",
          "GW_BASE_URL": "http://127.0.0.1:8080"
        }
      }
    }
  }

Any MCP client: run \`gw mcp\` as a stdio server (command + env). From source:
  command "bun", args ["run", "/path/to/gw/src/main.ts", "mcp"].
Give each agent its own GW_AGENT_ID: it keys that agent's unread messages.`;
