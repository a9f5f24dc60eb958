//! A row keeps its evidence whatever its name has in common with the
//! configured values the scrubber redacts, and no value survives anywhere.
//!
//! GIVEN servers whose names equal, contain or are contained in an argument,
//! an env value, a header value or a URL part of their own server or of
//! another one WHEN each server's evidence is published under its configured
//! name THEN every piece lands on its row, nothing is unattributed, and a
//! configured value appears in the stored history or the copied diagnostics
//! only inside a row's own (shown) name.

use std::sync::Arc;

use proptest::prelude::*;
use tether_core::model::{ClientInfo, Evidence, Timestamp};
use tether_core::registry::{PluginSource, Registry};
use tether_core::vocab::{DisplayStatus, EvidenceKind, ServerSource, Transport, Trigger};
use tether_core::{
    Decision, Delivery, DriveMode, Endpoint, KeyValue, PlanContext, PluginDescriptor, ServerSpec,
    TransportObserver,
};
use tether_hub::{AttemptRequest, Hub};
use tether_words::display::copy_diagnostics;

/// Delivers every server over stdio.
struct DeliverAll;

impl TransportObserver for DeliverAll {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new("deliver-all", ["deliver-all"], DriveMode::Passthrough, "0")
    }

    fn decide(&self, _: &ServerSpec, _: &PlanContext) -> Decision {
        Decision::Deliver {
            transport: Transport::Stdio,
            via: Delivery::ConfigFile,
        }
    }
}

/// A word that no fixed string of a history contains: letters, then digits.
fn word() -> impl Strategy<Value = String> {
    "[a-z]{3,6}[0-9]{2,3}"
}

/// How one server's name relates to one configured value.
#[derive(Debug, Clone, Copy)]
enum Relation {
    /// The value is the name.
    Equals,
    /// The value has the name inside it.
    ValueContainsName,
    /// The name has the value inside it.
    NameContainsValue,
}

#[derive(Debug, Clone)]
struct Case {
    names: Vec<String>,
    /// Per server: argument, env value, header value, URL part.
    values: Vec<[String; 4]>,
}

fn case() -> impl Strategy<Value = Case> {
    (2usize..=4)
        .prop_flat_map(|n| {
            (
                proptest::collection::vec(word(), n),
                proptest::collection::vec(proptest::array::uniform4(word()), n),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just(Relation::Equals),
                            Just(Relation::ValueContainsName),
                            Just(Relation::NameContainsValue),
                        ],
                        0usize..n,
                        0usize..4,
                        "[a-z]{1,3}",
                        "[a-z]{1,3}",
                    ),
                    n,
                ),
            )
        })
        .prop_map(|(mut names, mut values, relations)| {
            // Names first (they may take a value in), then the values that
            // take a name in, so each relation holds in the final case.
            for (i, (relation, other, slot, pre, post)) in relations.iter().enumerate() {
                if let Relation::NameContainsValue = relation {
                    names[i] = format!("{pre}{}{post}", values[*other][*slot]);
                }
            }
            for (i, (relation, other, slot, pre, post)) in relations.iter().enumerate() {
                match relation {
                    Relation::Equals => values[*other][*slot] = names[i].clone(),
                    Relation::ValueContainsName => {
                        values[*other][*slot] = format!("{pre}{}{post}", names[i]);
                    }
                    Relation::NameContainsValue => {}
                }
            }
            Case { names, values }
        })
        .prop_filter("distinct names", |c| {
            let mut names = c.names.clone();
            names.sort();
            names.dedup();
            names.len() == c.names.len()
        })
}

fn spec(name: &str, [arg, env, header, url]: &[String; 4]) -> ServerSpec {
    ServerSpec::new(
        name,
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "srv".into(),
            args: vec!["start".into(), arg.clone()],
            env: vec![KeyValue::new("SHARED_TOKEN", env.clone())],
            cwd: None,
        },
    )
    .or(Endpoint::Http {
        url: format!("http://u:{url}@127.0.0.1:9/{url}?q={url}"),
        headers: vec![KeyValue::new("X-Key", header.clone())],
    })
}

/// Every occurrence of `value` in `text` lies inside an occurrence of one of `names`.
fn only_inside_names(text: &str, value: &str, names: &[String]) -> bool {
    text.match_indices(value).all(|(at, _)| {
        names.iter().any(|name| {
            text.match_indices(name.as_str())
                .any(|(start, _)| start <= at && at + value.len() <= start + name.len())
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_piece_of_evidence_lands_on_its_row_and_no_value_survives(case in case()) {
        let mut registry = Registry::empty();
        registry.add(Arc::new(DeliverAll), PluginSource::Static).expect("add");
        let hub = Hub::new(registry);
        let servers: Vec<ServerSpec> =
            case.names.iter().zip(&case.values).map(|(n, v)| spec(n, v)).collect();
        let handle = hub
            .begin_attempt(AttemptRequest::new(tether_core::Owner { task: "t".into(), session: "s".into(), execution: "e".into() }, "deliver-all", DriveMode::Passthrough,
                Trigger::PassthroughStart, servers,
            ))
            .expect("begin");
        let every_value = case.values.iter().flatten().cloned().collect::<Vec<_>>().join(" ");
        for (i, name) in case.names.iter().enumerate() {
            let at = Timestamp(10 + 10 * i as u64);
            let conn = format!("c{i}");
            let events = [
                Evidence::new(EvidenceKind::Delivered, at).server(name.clone()),
                Evidence::new(EvidenceKind::InitializeObserved, Timestamp(at.0 + 1))
                    .server(name.clone())
                    .connection(conn.clone())
                    .client(ClientInfo {
                        name: format!("client {every_value}"),
                        version: Some(name.clone()),
                        protocol_version: None,
                    }),
                Evidence::new(EvidenceKind::ToolsListObserved, Timestamp(at.0 + 2))
                    .server(name.clone())
                    .connection(conn.clone())
                    .tools(i as u32 + 1),
                {
                    let mut ev = Evidence::new(EvidenceKind::AgentReported, Timestamp(at.0 + 3))
                        .server(name.clone())
                        .reported("connected");
                    ev.summary = Some(format!("{name} said {every_value}"));
                    ev
                },
                Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(at.0 + 4))
                    .server(name.clone())
                    .tool_call(format!("mcp__{name}__read"), true),
            ];
            for ev in events {
                handle.sink.publish(ev).expect("publish");
            }
        }
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        runtime.block_on(hub.flush());
        let history = hub.snapshot("s").expect("history");
        let attempt = history.current().expect("current");

        prop_assert_eq!(attempt.unattributed_evidence, 0);
        prop_assert_eq!(attempt.servers.len(), case.names.len());
        let shown: Vec<String> = attempt.servers.iter().map(|r| r.name.clone()).collect();
        for (i, row) in attempt.servers.iter().enumerate() {
            prop_assert_eq!(&row.name, &case.names[i], "a plain name is shown as configured");
            prop_assert_eq!(row.status, DisplayStatus::Active, "row {} lost evidence", i);
            prop_assert_eq!(row.tool_count, Some(i as u32 + 1));
            prop_assert!(row.last_tool_call.is_some());
            prop_assert_eq!(
                attempt.evidence.iter()
                    .filter(|e| e.kind == EvidenceKind::AgentReported
                        && e.server.as_deref() == Some(row.name.as_str()))
                    .count(),
                1
            );
        }
        for ev in &attempt.evidence {
            if let Some(server) = &ev.server {
                prop_assert!(shown.contains(server), "evidence names no row: {server}");
            }
        }

        let json = serde_json::to_string(&history).expect("json");
        let copied = copy_diagnostics(&history);
        for value in case.values.iter().flatten() {
            prop_assert!(only_inside_names(&json, value, &shown), "{value} survived in {json}");
            prop_assert!(only_inside_names(&copied, value, &shown), "{value} survived in {copied}");
        }
    }
}
