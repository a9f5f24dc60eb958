//! `tether-pinned-mcp --tools FILE`: a stdio MCP server, built on rmcp,
//! whose tools are whatever JSON array FILE holds when it starts (each a
//! tool definition as `tools/list` gives it), for the pin tests: change the
//! file between two endpoint tests and the server's tools change under the
//! user. Its serverInfo name is `pinned-test`.
//!
//! With `TETHER_CALLS_LOG=FILE` (or, as first named, `TETHER_CALL_LOG`) it
//! is also the refusal tests' counting server, counting and answering as
//! `tether_tests::counting` says (shared with `tether-counting-mcp`): each
//! `tools/call` it receives appends the tool's name (nothing else) as one
//! line to FILE, and it answers a tool named `fail` with `isError`, one
//! named `err` with a JSON-RPC error, and any other with `ok`. Without it
//! every call is a JSON-RPC error, as before.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tether_tests::counting::{self, Answer};

struct FromFile(Vec<Tool>);

impl ServerHandler for FromFile {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("pinned-test", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.0.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(log) = counting::log_file() {
            if let Err(err) = counting::count_call(&log, &request.name) {
                return Err(McpError::internal_error(format!("call log: {err}"), None));
            }
            return match counting::answer(&request.name) {
                Answer::Text(text) => {
                    Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                        ContentBlock::text(text),
                    ])))
                }
                Answer::ToolError(text) => {
                    Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                        ContentBlock::text(text),
                    ])))
                }
                Answer::RpcError(code, message) => {
                    Err(McpError::new(ErrorCode(code), message, None))
                }
            };
        }
        Err(McpError::invalid_params(
            format!("{} is not callable here", request.name),
            None,
        ))
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args
        .iter()
        .position(|a| a == "--tools")
        .and_then(|i| args.get(i + 1))
    else {
        eprintln!("tether-pinned-mcp: give --tools FILE");
        return std::process::ExitCode::from(2);
    };
    let tools: Vec<Tool> = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(tools) => tools,
        Err(err) => {
            eprintln!("tether-pinned-mcp: {path}: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    tether_tests::serve_stdio("tether-pinned-mcp", FromFile(tools))
}
