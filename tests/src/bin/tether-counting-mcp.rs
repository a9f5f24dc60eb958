//! `tether-counting-mcp`: a stdio MCP server (newline-delimited JSON-RPC)
//! that counts the `tools/call` requests it receives: the ground truth of
//! whether a harness's call reached the server (issue 57, refused calls).
//!
//! With `TETHER_CALLS_LOG=FILE` it appends one line per `tools/call` to
//! FILE: the tool's name, nothing else (never its arguments); the counting
//! and the answers are `tether_tests::counting`'s, shared with
//! `tether-pinned-mcp`. Its tools:
//!
//! - `get_current_time`: answers with a plain text result;
//! - `erroring_tool`: answers with a result whose `isError` is true (a tool
//!   error: the call reached the server);
//! - `rpc_error_tool`: answers with a JSON-RPC error (a protocol error: the
//!   call reached the server too).
//!
//! It answers `initialize` with the protocol version the client asked for.

use std::io::{BufRead, Write};

use serde_json::{Value, json};
use tether_tests::counting::{self, Answer};

fn tools() -> Value {
    let schema = json!({
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
    });
    json!([
        {"name": "get_current_time", "description": "Get the current time.", "inputSchema": schema},
        {"name": "erroring_tool", "description": "Always answers with a tool error.", "inputSchema": schema},
        {"name": "rpc_error_tool", "description": "Always answers with a JSON-RPC error.", "inputSchema": schema},
    ])
}

/// A JSON-RPC error answer to the request `id`.
fn error(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The answer to one request (`None` for a notification).
fn answer(request: &Value) -> Option<Value> {
    let id = request.get("id")?.clone();
    let method = request["method"].as_str().unwrap_or_default();
    let result = match method {
        "initialize" => {
            let version = request["params"]["protocolVersion"]
                .as_str()
                .unwrap_or("2025-06-18");
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tether-counting-mcp", "version": "1.0.0"},
            })
        }
        "ping" => json!({}),
        "tools/list" => json!({"tools": tools()}),
        "tools/call" => {
            let tool = request["params"]["name"].as_str().unwrap_or_default();
            if let Some(log) = counting::log_file()
                && let Err(err) = counting::count_call(&log, tool)
            {
                // A call not counted would read as one that never came.
                return Some(error(id, -32603, &format!("call log: {err}")));
            }
            let known = tools()
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["name"] == tool));
            if !known {
                return Some(error(id, -32602, "unknown tool"));
            }
            match counting::answer(tool) {
                Answer::Text(text) => json!({
                    "content": [{"type": "text", "text": text}],
                    "isError": false,
                }),
                Answer::ToolError(text) => json!({
                    "content": [{"type": "text", "text": text}],
                    "isError": true,
                }),
                Answer::RpcError(code, message) => return Some(error(id, code, message)),
            }
        }
        "resources/list" => json!({"resources": []}),
        "prompts/list" => json!({"prompts": []}),
        _ => return Some(error(id, -32601, "method not found")),
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

fn main() -> std::process::ExitCode {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else {
            break;
        };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if let Some(reply) = answer(&request)
            && (writeln!(stdout, "{reply}").is_err() || stdout.flush().is_err())
        {
            break;
        }
    }
    std::process::ExitCode::SUCCESS
}
