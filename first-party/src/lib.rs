//! tether-first-party: every first-party plugin, linked in one place. The
//! CLI, the example host and the tests call [`link`] rather than naming each
//! plugin, so adding a harness edits the list below and no other.
//!
//! Plugins register themselves (`register_plugin!`, and a config scanner
//! with the inventory kit) through link-time collection: a plugin crate
//! nothing refers to could be left out of a binary, so [`link`] refers to
//! each.

use tether_core::{PluginDescriptor, TransportObserver};

/// Every first-party plugin's descriptor, in the order they are listed.
/// Calling it keeps each plugin (and its registrations) in the binary.
pub fn link() -> Vec<PluginDescriptor> {
    let plugins: [&dyn TransportObserver; 8] = [
        &tether_acp_structured::AcpStructured,
        &tether_passthrough_claude::PassthroughClaude,
        &tether_passthrough_codex::PassthroughCodex,
        &tether_passthrough_copilot::PassthroughCopilot,
        &tether_passthrough_cursor::PassthroughCursor,
        &tether_passthrough_gemini::PassthroughGemini(tether_passthrough_gemini::GEMINI),
        &tether_passthrough_gemini::PassthroughGemini(tether_passthrough_gemini::QWEN),
        &tether_passthrough_opencode::PassthroughOpenCode,
    ];
    plugins.iter().map(|p| p.descriptor()).collect()
}
