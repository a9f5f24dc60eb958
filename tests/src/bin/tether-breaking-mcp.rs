//! `tether-breaking-mcp [--many N]`: a stdio MCP server, built on rmcp,
//! whose tools are made to break what harnesses do between a server's
//! `tools/list` and the model's request (the last mile):
//!
//! - `echo`: a plain tool that works (the one a session calls);
//! - `dotted.name` and `name with space`: characters model APIs refuse, so
//!   harnesses rename them;
//! - `a.b`, `a_b` and `a-b`: names one renaming or another makes the same;
//! - two 69-character names that differ only in their middle, so a
//!   harness that shortens long names to their start and end makes them
//!   collide;
//! - two names that share their first 64 characters, so a harness that
//!   cuts names at their end makes them collide;
//! - `root_one_of`: an input schema whose top level is a `oneOf`, which
//!   some providers refuse;
//! - `--many N`: N more plain tools (`bulk_000` …), for tool-count limits.
//!
//! Every call of any tool answers `ok` (nothing is read or kept).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

struct Breaking {
    tools: Vec<Tool>,
}

fn tools(many: usize) -> Vec<Tool> {
    tether_tests::breaking::tools(many)
        .into_iter()
        .map(|(name, schema)| {
            let schema = match schema {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            // The description names the tool, so the fake model's log says
            // which of two colliding tools a harness kept.
            Tool::new(
                name.clone(),
                format!("{}{name}", tether_tests::fake_model::ORIGIN),
                Arc::new(schema),
            )
        })
        .collect()
}

impl ServerHandler for Breaking {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether-breaking-mcp", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if self.get_tool(&request.name).is_none() {
            return Err(McpError::invalid_params("unknown tool", None));
        }
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text("ok"),
        ])))
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let many = args
        .iter()
        .position(|a| a == "--many")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0usize)
        .min(10_000);
    tether_tests::serve_stdio("tether-breaking-mcp", Breaking { tools: tools(many) })
}
