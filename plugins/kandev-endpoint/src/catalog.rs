//! The tool catalog of the host's own server, built from what tools/list
//! served: bounded, sorted by name, with o200k_base token estimates.
//!
//! Built on a blocking thread after the response has gone out, and only when
//! the served list changed, so it never slows the agent's MCP traffic.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::Tool;
use tether_core::model::{
    CATALOG_MAX_DESCRIPTION_BYTES, CATALOG_MAX_SCHEMA_BYTES, CATALOG_MAX_TOOLS,
    CATALOG_MAX_TOTAL_SCHEMA_BYTES, CATALOG_METHOD, CatalogTool, Timestamp, ToolCatalog,
};
use tether_core::sanitize::truncate_utf8;
use tiktoken_rs::CoreBPE;

use crate::observe::ToolsListedHook;

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

/// o200k_base tokens of the compact JSON of one tool definition.
pub fn token_estimate(tool: &Tool) -> u32 {
    let (Some(bpe), Ok(json)) = (encoder(), serde_json::to_string(tool)) else {
        return 0;
    };
    u32::try_from(bpe.encode_ordinary(&json).len()).unwrap_or(u32::MAX)
}

/// Builds the bounded catalog of a served tool list.
pub fn build_catalog(tools: &[Tool], at: Timestamp) -> ToolCatalog {
    let mut sorted: Vec<&Tool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let estimates: Vec<u32> = sorted.iter().map(|t| token_estimate(t)).collect();
    let mut schema_budget = CATALOG_MAX_TOTAL_SCHEMA_BYTES;
    let kept = sorted
        .iter()
        .zip(&estimates)
        .take(CATALOG_MAX_TOOLS)
        .map(|(tool, &token_estimate)| {
            let (description, description_truncated) = match tool.description.as_deref() {
                Some(d) => {
                    let cut = truncate_utf8(d, CATALOG_MAX_DESCRIPTION_BYTES);
                    (Some(cut.to_owned()), cut.len() < d.len())
                }
                None => (None, false),
            };
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            let bytes = serde_json::to_string(&schema).map_or(0, |s| s.len());
            let fits = bytes <= CATALOG_MAX_SCHEMA_BYTES && bytes <= schema_budget;
            if fits {
                schema_budget -= bytes;
            }
            CatalogTool {
                name: truncate_utf8(&tool.name, 128).to_owned(),
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
        method: if encoder().is_some() {
            CATALOG_METHOD.to_owned()
        } else {
            "unavailable".to_owned()
        },
        at,
        tool_count: u32::try_from(tools.len()).unwrap_or(u32::MAX),
        tools: kept,
        truncated: tools.len() > CATALOG_MAX_TOOLS,
        total_tokens: estimates.iter().map(|&t| u64::from(t)).sum(),
    }
}

fn fingerprint(tools: &[Tool]) -> u64 {
    let json = serde_json::to_string(tools).unwrap_or_default();
    // One fixed-key hasher per process, so equal lists give equal fingerprints.
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    KEYS.get_or_init(RandomState::new).hash_one(json)
}

/// The hook the endpoint installs: catalog each changed tools/list, off the request path.
pub fn catalog_hook() -> ToolsListedHook {
    let last: Arc<Mutex<Option<(String, u64)>>> = Arc::new(Mutex::new(None));
    Arc::new(move |sink, server, tools| {
        let (sink, server, tools, last) = (
            sink.clone(),
            server.to_owned(),
            tools.to_vec(),
            Arc::clone(&last),
        );
        let at = Timestamp::now();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn_blocking(move || {
            let key = (sink.attempt_id().to_owned(), fingerprint(&tools));
            if last.lock().unwrap_or_else(|p| p.into_inner()).as_ref() == Some(&key) {
                return;
            }
            if sink
                .publish_catalog(server, build_catalog(&tools, at))
                .is_ok()
            {
                *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(key);
            }
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str, schema_bytes: usize) -> Tool {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("description".into(), "x".repeat(schema_bytes).into());
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
    }

    #[test]
    fn the_catalog_is_sorted_bounded_and_marked() {
        let mut tools: Vec<Tool> = (0..130)
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
        assert!(
            catalog.total_tokens
                >= catalog
                    .tools
                    .iter()
                    .map(|t| u64::from(t.token_estimate))
                    .sum::<u64>()
        );
    }

    #[test]
    fn the_total_schema_budget_is_enforced() {
        let tools: Vec<Tool> = (0..20)
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
    fn token_estimates_use_o200k_over_compact_json() {
        let t = tool("echo", "Echo text back.", 0);
        let json = serde_json::to_string(&t).expect("json");
        let expected = tiktoken_rs::o200k_base()
            .expect("bpe")
            .encode_ordinary(&json)
            .len();
        assert_eq!(token_estimate(&t) as usize, expected);
        assert!(expected > 5);
    }
}
