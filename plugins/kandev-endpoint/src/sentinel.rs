//! The probe's sentinel toolset: one harmless tool, `sentinel_echo`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

/// The sentinel's only tool.
pub const SENTINEL_TOOL: &str = "sentinel_echo";
/// The sentinel server's default name in a plan.
pub const SENTINEL_SERVER: &str = "tether-sentinel";

/// A server with one tool that echoes its `text` argument. It reads nothing,
/// writes nothing and calls nothing.
#[derive(Debug, Clone, Default)]
pub struct Sentinel;

impl Sentinel {
    /// The tool definition served by tools/list.
    pub fn tool() -> Tool {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "Text to echo back."}
            },
            "required": ["text"]
        });
        let schema = match schema {
            serde_json::Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        Tool::new(
            SENTINEL_TOOL,
            "Echo the given text. Tether uses it to prove this MCP server is attached.",
            Arc::new(schema),
        )
    }
}

impl ServerHandler for Sentinel {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                SENTINEL_SERVER,
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("Tether's sentinel. Call sentinel_echo when asked to.")
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![Self::tool()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == SENTINEL_TOOL).then(Self::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != SENTINEL_TOOL {
            return Err(McpError::invalid_params(
                format!("unknown tool {}", request.name),
                None,
            ));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|args| args.get("text"))
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .chars()
            .take(4096)
            .collect::<String>();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(format!("sentinel: {text}")),
        ])))
    }
}
