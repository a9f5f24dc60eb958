//! How the counting MCP peers count, in one place: `tether-counting-mcp`
//! (hand-written JSON-RPC, its tools fixed) and `tether-pinned-mcp` (rmcp,
//! its tools from a file) both log each `tools/call` they receive here and
//! answer it as [`answer`] says. The log is the ground truth of whether a
//! harness's call reached the server (issue 57, refused calls): one line
//! per call, the tool's name and nothing else (never its arguments).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The variable naming the file each counted `tools/call` is appended to.
pub const CALLS_LOG: &str = "TETHER_CALLS_LOG";

/// The same, as `tether-pinned-mcp` first named it: still honoured, where
/// [`CALLS_LOG`] is not set.
pub const CALL_LOG: &str = "TETHER_CALL_LOG";

/// The file calls are counted in, from this process's environment
/// ([`CALLS_LOG`], else [`CALL_LOG`]); `None`: no counting.
pub fn log_file() -> Option<PathBuf> {
    std::env::var_os(CALLS_LOG)
        .or_else(|| std::env::var_os(CALL_LOG))
        .map(PathBuf::from)
}

/// Appends `tool` (its name alone) to `log` as one line.
pub fn count_call(log: &Path, tool: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    writeln!(file, "{tool}")
}

/// The `tools/call` requests a counting server logged in `log`, one tool
/// name each, in order: none where the file is absent (nothing reached it).
pub fn received(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// How a counting server answers a call it counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A result with this text (`isError` false).
    Text(&'static str),
    /// A result with this text and `isError` true: a tool error (the call
    /// reached the server).
    ToolError(&'static str),
    /// A JSON-RPC error with this code and message: a protocol error (the
    /// call reached the server too).
    RpcError(i32, &'static str),
}

/// The answer to a counted call of `tool`: `erroring_tool` and `fail` a
/// tool error, `rpc_error_tool` and `err` a JSON-RPC error, any other a
/// text (`tether-counting-mcp`'s names first, `tether-pinned-mcp`'s after;
/// each keeps the words and codes it always answered with).
pub fn answer(tool: &str) -> Answer {
    match tool {
        "get_current_time" => Answer::Text("1970-01-01T00:00:00Z"),
        "erroring_tool" => Answer::ToolError("the tool failed"),
        // JSON-RPC's internal error.
        "rpc_error_tool" => Answer::RpcError(-32603, "the server failed"),
        "fail" => Answer::ToolError("failed as asked"),
        // JSON-RPC's invalid params.
        "err" => Answer::RpcError(-32602, "err answers an error"),
        _ => Answer::Text("ok"),
    }
}
