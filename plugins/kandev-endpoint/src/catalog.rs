//! The tool catalog of the host's own server, built from what tools/list
//! served: bounded, sorted by name, with o200k_base token estimates
//! (`tether-catalog`).
//!
//! Built on a blocking thread after the response has gone out, and only when
//! the served list changed, so it never slows the agent's MCP traffic.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::Tool;
use tether_core::model::{Timestamp, ToolCatalog};

use crate::report::ToolsListedHook;

/// The bounded catalog of a served tool list (`tether_catalog`'s method).
pub fn build_catalog(tools: &[Tool], at: Timestamp) -> ToolCatalog {
    let json: Vec<serde_json::Value> = tools
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    tether_catalog::build_catalog(&json, at)
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
        let at = tether_hub::now();
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

    #[test]
    fn a_served_tool_list_is_catalogued_with_the_shared_method() {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), "object".into());
        let tools = vec![Tool::new("echo", "Echo text back.", Arc::new(schema))];
        let catalog = build_catalog(&tools, Timestamp(1));
        assert_eq!(catalog.method, tether_core::model::CATALOG_METHOD);
        let json = serde_json::to_value(&tools[0]).expect("json");
        assert_eq!(
            catalog.total_tokens,
            u64::from(tether_catalog::token_estimate(&json))
        );
        assert!(catalog.total_tokens > 5);
    }
}
