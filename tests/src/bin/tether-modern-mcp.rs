//! `tether-modern-mcp`: a stdio MCP server, built on rmcp, that speaks only
//! MCP 2026-07-28: it answers `server/discover` and serves the sentinel's one
//! tool, and refuses the legacy `initialize` handshake. Nobody ships such a
//! server yet; the endpoint check must still reach it.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tether_kandev_endpoint::Sentinel;

struct ModernOnly(Sentinel);

impl ServerHandler for ModernOnly {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&[ProtocolVersion::V_2026_07_28])
    }

    async fn initialize(
        &self,
        _request: InitializeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        Err(McpError::method_not_found::<
            rmcp::model::InitializeResultMethod,
        >())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.0.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.0.call_tool(request, context).await
    }
}

fn main() -> std::process::ExitCode {
    tether_tests::serve_stdio("tether-modern-mcp", ModernOnly(Sentinel))
}
