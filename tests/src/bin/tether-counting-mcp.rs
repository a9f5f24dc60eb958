//! `tether-counting-mcp`: a stdio MCP server (newline-delimited JSON-RPC)
//! that counts the `tools/call` requests it receives: the ground truth of
//! whether a harness's call reached the server (issue 57, refused calls).
//!
//! With `TETHER_CALLS_LOG=FILE` it appends one line per `tools/call` to
//! FILE: the tool's name, nothing else (never its arguments). Its tools:
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

/// The JSON-RPC error code `rpc_error_tool` answers with (internal error).
const RPC_ERROR: i64 = -32603;

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

fn log_call(tool: &str) {
    let Some(path) = std::env::var_os("TETHER_CALLS_LOG") else {
        return;
    };
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(file, "{tool}");
    }
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
            log_call(tool);
            match tool {
                "get_current_time" => json!({
                    "content": [{"type": "text", "text": "1970-01-01T00:00:00Z"}],
                    "isError": false,
                }),
                "erroring_tool" => json!({
                    "content": [{"type": "text", "text": "the tool failed"}],
                    "isError": true,
                }),
                "rpc_error_tool" => {
                    return Some(json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": RPC_ERROR, "message": "the server failed"},
                    }));
                }
                _ => {
                    return Some(json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32602, "message": "unknown tool"},
                    }));
                }
            }
        }
        "resources/list" => json!({"resources": []}),
        "prompts/list" => json!({"prompts": []}),
        _ => {
            return Some(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": "method not found"},
            }));
        }
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
