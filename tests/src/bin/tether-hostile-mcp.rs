//! `tether-hostile-mcp --mode MODE --pids FILE`: a stdio "MCP server" that
//! misbehaves on purpose, for endpoint-test tests. It writes its own pid (and
//! any children's) to FILE so tests can prove nothing is left behind.
//!
//! Modes: `never` (reads, never answers), `garbage` (writes non-JSON-RPC),
//! `huge` (answers initialize, then a 100 MB tools/list), `grandchildren`
//! (starts two `sleep` children, then hangs), `exit` (exits at once),
//! `refuses-all` (a JSON-RPC peer that refuses every method, both eras'
//! included), `empty-unknown` (a legacy server that answers a method it
//! does not know, `server/discover` among them, with `{}` instead of
//! -32601, as the MCP conformance suite's 2025 server does). The pid file
//! is appended to, so a test that starts it twice can check both.

use std::io::{BufRead, Write};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mode = value("--mode").unwrap_or_default();
    let mut pids = vec![std::process::id()];
    if mode == "grandchildren" {
        for _ in 0..2 {
            if let Ok(child) = std::process::Command::new("sleep").arg("1000").spawn() {
                pids.push(child.id());
            }
        }
    }
    if let Some(path) = value("--pids")
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        for pid in &pids {
            let _ = writeln!(file, "{pid}");
        }
    }
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    match mode.as_str() {
        "exit" => {
            eprintln!("hostile: exiting at once");
            std::process::exit(1);
        }
        "garbage" => {
            for i in 0..5 {
                let _ = writeln!(stdout, "Starting server... step {i} <not json>");
            }
            let _ = stdout.flush();
            std::thread::sleep(std::time::Duration::from_secs(1000));
        }
        "huge" => {
            for line in stdin.lock().lines() {
                let Ok(line) = line else { return };
                let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let id = msg.get("id").cloned();
                match msg.get("method").and_then(|m| m.as_str()) {
                    Some("initialize") => {
                        let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {
                            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "hostile", "version": "0"}}});
                        let _ = writeln!(stdout, "{reply}");
                        let _ = stdout.flush();
                    }
                    Some("tools/list") => {
                        // 100 MB on one line, written in chunks.
                        let _ = write!(
                            stdout,
                            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"tools\":[",
                            id.unwrap_or_default()
                        );
                        let tool = r#"{"name":"t","description":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx","inputSchema":{"type":"object"}},"#;
                        let mut written = 0usize;
                        while written < 100 * 1024 * 1024 {
                            if stdout.write_all(tool.as_bytes()).is_err() {
                                return;
                            }
                            written += tool.len();
                        }
                        let _ = writeln!(stdout, "{{\"name\":\"last\",\"inputSchema\":{{}}}}]}}}}");
                        let _ = stdout.flush();
                    }
                    // As real legacy servers do: unknown requests are refused.
                    Some(_) if id.is_some() => {
                        let reply = serde_json::json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32601, "message": "Method not found"}});
                        let _ = writeln!(stdout, "{reply}");
                        let _ = stdout.flush();
                    }
                    _ => {}
                }
            }
        }
        "empty-unknown" => {
            for line in stdin.lock().lines() {
                let Ok(line) = line else { return };
                let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let Some(id) = msg.get("id").cloned() else {
                    continue;
                };
                let result = match msg.get("method").and_then(|m| m.as_str()) {
                    Some("initialize") => serde_json::json!({
                        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "lenient", "version": "0"}}),
                    Some("tools/list") => serde_json::json!({"tools": [
                        {"name": "only", "inputSchema": {"type": "object"}}]}),
                    _ => serde_json::json!({}),
                };
                let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
                let _ = writeln!(stdout, "{reply}");
                let _ = stdout.flush();
            }
        }
        "refuses-all" => {
            for line in stdin.lock().lines() {
                let Ok(line) = line else { return };
                let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if let Some(id) = msg.get("id").cloned() {
                    let reply = serde_json::json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "Method not found"}});
                    let _ = writeln!(stdout, "{reply}");
                    let _ = stdout.flush();
                }
            }
        }
        // never, grandchildren: read and never answer.
        _ => {
            for line in stdin.lock().lines() {
                if line.is_err() {
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_secs(1000));
        }
    }
}
