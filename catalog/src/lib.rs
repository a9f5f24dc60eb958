//! tether-catalog: what a server's tool list costs the model.
//!
//! Every tool definition an MCP server lists is sent to the model, usually
//! before the user types anything. This crate turns a `tools/list` result
//! into a bounded [`ToolCatalog`] with a token estimate per tool and in
//! total, by one method everywhere (the host's own endpoint, the observing
//! relay, `tether endpoint-test` and `tether inventory --test`):
//! [`CATALOG_METHOD`], o200k_base over each tool's compact JSON (keys in the
//! order the server sent them, non-ASCII unescaped), summed over every tool
//! listed, left-out ones included.
//!
//! Pure computation over data already received: no I/O. The o200k_base
//! tables load once per process; where they cannot, the method reads
//! `unavailable` and every estimate is 0, never a guess.

#![warn(missing_docs)]

use std::sync::OnceLock;

use serde_json::Value;
use tether_core::model::{
    CATALOG_MAX_DESCRIPTION_BYTES, CATALOG_MAX_SCHEMA_BYTES, CATALOG_MAX_TOOLS,
    CATALOG_MAX_TOTAL_SCHEMA_BYTES, CATALOG_METHOD, CatalogTool, Timestamp, ToolCatalog,
};
use tether_core::sanitize::truncate_utf8;
use tiktoken_rs::CoreBPE;

/// The method of an estimate made over a typed client's view of the tools
/// rather than the bytes the server sent: fields the client does not model
/// (newer spec fields, vendor extensions) are not counted, so it can be low.
pub const MODELLED_METHOD: &str = "o200k_base:mcp-tool-json-v1:modelled-fields";

fn encoder() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| match tiktoken_rs::o200k_base() {
        Ok(bpe) => Some(bpe),
        Err(err) => {
            tracing::error!(%err, "o200k_base could not be loaded; token estimates are off");
            None
        }
    })
    .as_ref()
}

/// The method the estimates were made with: [`CATALOG_METHOD`], or
/// `unavailable` when the tokenizer could not load.
pub fn method() -> &'static str {
    if encoder().is_some() {
        CATALOG_METHOD
    } else {
        "unavailable"
    }
}

/// o200k_base tokens of a text.
pub fn tokens(text: &str) -> u32 {
    encoder().map_or(0, |bpe| {
        u32::try_from(bpe.encode_ordinary(text).len()).unwrap_or(u32::MAX)
    })
}

/// o200k_base tokens of the compact JSON of one tool definition.
pub fn token_estimate(tool: &Value) -> u32 {
    serde_json::to_string(tool).map_or(0, |json| tokens(&json))
}

/// Builds the bounded catalog of a listed tool array (each element one tool
/// definition as JSON): sorted by name, at most [`CATALOG_MAX_TOOLS`] kept,
/// descriptions cut to [`CATALOG_MAX_DESCRIPTION_BYTES`], input schemas over
/// [`CATALOG_MAX_SCHEMA_BYTES`] or past [`CATALOG_MAX_TOTAL_SCHEMA_BYTES`]
/// left out, each cut marked; the total counts every tool.
pub fn build_catalog(tools: &[Value], at: Timestamp) -> ToolCatalog {
    let name = |t: &Value| {
        t.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut sorted: Vec<(String, usize, &Value)> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| (name(t), i, t))
        .collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let estimates: Vec<u32> = sorted.iter().map(|(_, _, t)| token_estimate(t)).collect();
    let mut schema_budget = CATALOG_MAX_TOTAL_SCHEMA_BYTES;
    let kept = sorted
        .iter()
        .zip(&estimates)
        .take(CATALOG_MAX_TOOLS)
        .map(|((name, listed_at, tool), &token_estimate)| {
            let (description, description_truncated) =
                match tool.get("description").and_then(Value::as_str) {
                    Some(d) => {
                        let cut = truncate_utf8(d, CATALOG_MAX_DESCRIPTION_BYTES);
                        (Some(cut.to_owned()), cut.len() < d.len())
                    }
                    None => (None, false),
                };
            let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
            let bytes = serde_json::to_string(&schema).map_or(0, |s| s.len());
            let fits = bytes <= CATALOG_MAX_SCHEMA_BYTES && bytes <= schema_budget;
            if fits {
                schema_budget -= bytes;
            }
            CatalogTool {
                name: truncate_utf8(name, 128).to_owned(),
                listed_at: u32::try_from(*listed_at).unwrap_or(u32::MAX),
                description,
                description_truncated,
                input_schema: fits.then_some(schema),
                input_schema_truncated: !fits,
                input_schema_bytes: bytes as u64,
                token_estimate,
            }
        })
        .collect();
    ToolCatalog {
        method: method().to_owned(),
        at,
        tool_count: u32::try_from(tools.len()).unwrap_or(u32::MAX),
        tools: kept,
        truncated: tools.len() > CATALOG_MAX_TOOLS,
        total_tokens: estimates.iter().map(|&t| u64::from(t)).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema_bytes: usize) -> Value {
        json!({
            "name": name,
            "description": description,
            "inputSchema": {"type": "object", "description": "x".repeat(schema_bytes)},
        })
    }

    #[test]
    fn the_catalog_is_sorted_bounded_and_marked() {
        let mut tools: Vec<Value> = (0..130)
            .map(|i| tool(&format!("t{i:03}"), "d", 10))
            .collect();
        tools.reverse();
        tools.push(tool("aaa-long", &"é".repeat(1000), 70 * 1024));
        let catalog = build_catalog(&tools, Timestamp(1));
        assert_eq!(catalog.method, CATALOG_METHOD);
        assert_eq!(catalog.tool_count, 131);
        assert_eq!(catalog.tools.len(), CATALOG_MAX_TOOLS);
        assert!(catalog.truncated);
        let names: Vec<_> = catalog.tools.iter().map(|t| t.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        let long = &catalog.tools[0];
        assert_eq!(long.name, "aaa-long");
        assert!(long.description_truncated);
        assert!(long.description.as_ref().is_some_and(|d| d.len() <= 1024));
        assert!(long.input_schema_truncated && long.input_schema.is_none());
        assert!(long.input_schema_bytes > 64 * 1024);
        assert!(catalog.tools[1].input_schema.is_some());
        assert!(catalog.tools.iter().all(|t| t.token_estimate > 0));
        let kept: u64 = catalog
            .tools
            .iter()
            .map(|t| u64::from(t.token_estimate))
            .sum();
        assert!(catalog.total_tokens > kept, "left-out tools still count");
    }

    #[test]
    fn the_total_schema_budget_is_enforced() {
        let tools: Vec<Value> = (0..20)
            .map(|i| tool(&format!("t{i:02}"), "d", 40 * 1024))
            .collect();
        let catalog = build_catalog(&tools, Timestamp(1));
        let kept: u64 = catalog
            .tools
            .iter()
            .filter(|t| t.input_schema.is_some())
            .map(|t| t.input_schema_bytes)
            .sum();
        assert!(kept <= CATALOG_MAX_TOTAL_SCHEMA_BYTES as u64);
        assert!(catalog.tools.iter().any(|t| t.input_schema_truncated));
        assert!(!catalog.truncated, "no tool was left out, only schemas");
    }

    #[test]
    fn estimates_are_o200k_over_the_compact_json_in_wire_order() {
        // Key order as sent: "name" after "inputSchema" here.
        let wire = r#"{"inputSchema":{"type":"object","properties":{"text":{"type":"string"}}},"name":"echo","description":"Echo text back. é"}"#;
        let t: Value = serde_json::from_str(wire).expect("json");
        assert_eq!(serde_json::to_string(&t).expect("json"), wire, "order kept");
        let expected = tiktoken_rs::o200k_base()
            .expect("bpe")
            .encode_ordinary(wire)
            .len();
        assert_eq!(token_estimate(&t) as usize, expected);
        assert!(expected > 10);
    }

    #[test]
    fn a_filter_subtracts_the_tools_it_drops() {
        let tools = vec![tool("a", "d", 10), tool("b", "d", 10), tool("c", "d", 10)];
        let catalog = build_catalog(&tools, Timestamp(1));
        let each = |n: &str| {
            u64::from(
                catalog
                    .tools
                    .iter()
                    .find(|t| t.name == n)
                    .expect("tool")
                    .token_estimate,
            )
        };
        assert_eq!(catalog.kept_tokens(None, &[]), catalog.total_tokens);
        let include = ["a".to_owned(), "c".to_owned()];
        assert_eq!(
            catalog.kept_tokens(Some(&include), &[]),
            each("a") + each("c")
        );
        assert_eq!(
            catalog.kept_tokens(Some(&include), &["c".to_owned()]),
            each("a")
        );
        assert_eq!(
            catalog.kept_tokens(None, &["b".to_owned()]),
            each("a") + each("c")
        );
    }
}
