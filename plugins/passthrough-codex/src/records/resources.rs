//! Codex's own MCP resource tools: `list_mcp_resources`,
//! `list_mcp_resource_templates` and `read_mcp_resource`, which Codex
//! writes as MCP calls (`mcp_tool_call_end`, `McpToolCall` items) under
//! the server they were asked about, or under `codex` when they were asked
//! about every server (openai/codex `core/src/tools/handlers/
//! mcp_resource.rs`: `server.clone().unwrap_or_else(|| "codex"
//! .to_string())`; the three names and the resource tools' descriptions
//! are in the 0.171.0 binary's strings; two third-party rollouts, 0.117
//! and 0.121, write them so).
//!
//! They are Codex's tools, not a server's: never a call of a server's
//! tool, and `codex` is no server. What they answered is evidence of the
//! servers that answered, as metadata only: the result (`CallToolResult`
//! whose one text item is Codex's own JSON, `{server?, resources: [{server,
//! uri, name, …}], nextCursor?}` or `{…, resourceTemplates: […]}`) is read
//! for each resource's `server` name and a count per server, never a URI,
//! a name or content; a read resource only for the server it names.

use serde::Deserialize;
use tether_core::model::Timestamp;
use tether_core::records::{RecordReading, name};
use tether_core::vocab::ReportedStatus;
use tether_sdk::records::push;

/// Codex's own resource tools.
pub const RESOURCE_TOOLS: &[&str] = &[
    "list_mcp_resources",
    "list_mcp_resource_templates",
    "read_mcp_resource",
];

/// The server name Codex files a resource tool under when it was asked
/// about every server: Codex itself, no MCP server.
pub const CODEX_ITSELF: &str = "codex";

/// Whether `tool` is one of Codex's own resource tools.
pub fn is_resource_tool(tool: &str) -> bool {
    RESOURCE_TOOLS.contains(&tool)
}

/// Codex's payload, as the result's text gives it: the server names only.
#[derive(Deserialize)]
struct Listing {
    #[serde(default)]
    resources: Vec<Named>,
    #[serde(rename = "resourceTemplates", default)]
    resource_templates: Vec<Named>,
}

/// A resource's `server`, where it is a string: a resource of another
/// shape (or a `server` of another type) is that resource unread, never
/// the listing's other servers lost (issue 68 §2; the plain path reads it
/// so too).
struct Named {
    server: Option<String>,
}

impl<'de> Deserialize<'de> for Named {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NamedVisitor)
    }
}

struct NamedVisitor;

impl<'de> serde::de::Visitor<'de> for NamedVisitor {
    type Value = Named;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a resource")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Named, A::Error> {
        let mut server = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "server" {
                // Only a string is kept; the last `server` wins, as in
                // the plain path's `Value`.
                server = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::String(s) => Some(s),
                    _ => None,
                };
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Named { server })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Named, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Named { server: None })
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Named, E> {
        Ok(Named { server: None })
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Named, E> {
        Ok(Named { server: None })
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Named, E> {
        Ok(Named { server: None })
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Named, E> {
        Ok(Named { server: None })
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Named, E> {
        Ok(Named { server: None })
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Named, E> {
        Ok(Named { server: None })
    }
}

/// Servers named per listing, at most.
const MAX_SERVERS: usize = 256;

/// How Codex's own JSON starts (`serde_json::to_string` of its payload,
/// fields in their declared order): only such a text is parsed.
const LISTING_STARTS: &[&str] = &["{\"server\":", "{\"resources\":", "{\"resourceTemplates\":"];

/// A result's text item, where it is Codex's own resource listing: the
/// servers it names and how many of their resources (or templates). Any
/// other text is passed over unkept.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ListingText(pub Option<Vec<(String, u32)>>);

impl<'de> Deserialize<'de> for ListingText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListingVisitor)
    }
}

/// A string is looked at in place (never copied unless it is a listing);
/// anything else is no listing.
struct ListingVisitor;

impl<'de> serde::de::Visitor<'de> for ListingVisitor {
    type Value = ListingText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a result's text")
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ListingText(listed(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(ListingText(None))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ListingText(None))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ListingText(None))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ListingText(None))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ListingText(None))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(ListingText(None))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(ListingText(None))
    }
}

/// The servers a listing's text names, with counts, where it is one.
fn listed(text: &str) -> Option<Vec<(String, u32)>> {
    if !LISTING_STARTS.iter().any(|s| text.starts_with(s)) {
        return None;
    }
    let listing = serde_json::from_str::<Listing>(text).ok()?;
    let mut counts: Vec<(String, u32)> = Vec::new();
    for s in listing
        .resources
        .iter()
        .chain(&listing.resource_templates)
        .filter_map(|r| r.server.as_deref())
    {
        if let Some((_, n)) = counts.iter_mut().find(|(c, _)| c == s) {
            *n = n.saturating_add(1);
        } else if counts.len() < MAX_SERVERS {
            counts.push((s.to_owned(), 1));
        }
    }
    Some(counts)
}

/// A resource tool's call that succeeded: `server` (as Codex filed the
/// call) and the servers its result's listing names, each of which
/// answered Codex: connected, with what showed it and how many of its
/// resources. A call filed under a server and answered shows that server
/// answered too; `codex` is never a server.
pub fn answered(
    reading: &mut RecordReading,
    (server, tool): (&str, &str),
    listing: Option<&[(String, u32)]>,
    at: Timestamp,
) {
    let mut counts: Vec<(&str, u32)> = listing
        .unwrap_or_default()
        .iter()
        .map(|(s, n)| (s.as_str(), *n))
        .collect();
    if server != CODEX_ITSELF && !counts.iter().any(|(s, _)| *s == server) {
        counts.push((server, 0));
    }
    for (s, n) in counts {
        let Some(s) = name(s).filter(|s| s != CODEX_ITSELF) else {
            continue;
        };
        let what = match (tool, n) {
            ("read_mcp_resource", _) => {
                "Codex's read_mcp_resource read one of its resources".to_owned()
            }
            (_, 0) => format!("Codex's {tool} had its answer"),
            (_, n) => format!("Codex's {tool} named {n} of its resource(s)"),
        };
        let mut up = tether_sdk::telemetry::reported(&s, ReportedStatus::Connected, at);
        up.summary = Some(what);
        push(reading, up);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN Codex's listing (0.171.0 `serde_json::to_string` of its
    /// payload, compact) with one resource whose `server` is of another
    /// type, and one that is no object WHEN read THEN those resources are
    /// unread and the other servers still counted, as the plain path
    /// counts them (issue 68 §2: never the whole listing lost).
    #[test]
    fn an_odd_resource_is_that_resource_unread() {
        let text = r#"{"resources":[{"server":"figma","uri":"u","name":"n"},{"server":7,"uri":"u"},"x",{"server":"figma"},{"uri":"u","server":"docs"}],"nextCursor":null}"#;
        assert_eq!(
            listed(text),
            Some(vec![("figma".to_owned(), 2), ("docs".to_owned(), 1)])
        );
        let templates = r#"{"resourceTemplates":[{"server":null},{"server":"figma"}]}"#;
        assert_eq!(listed(templates), Some(vec![("figma".to_owned(), 1)]));
    }
}
