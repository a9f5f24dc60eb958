//! [`SessionFacts`] as kept between runs (`crate::ledger`): every field,
//! maps keyed by tuples as lists of pairs, the index of the kinds of use
//! rebuilt on load.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tether_core::model::{Evidence, Timestamp};
use tether_core::telemetry::NamedServer;

use super::{Call, Counted, Fact, SessionFacts, UseKind};

/// Uses counted without their ids, keyed by (role, kind of use).
type UsesCounted<'a> = Vec<(&'a (String, String), &'a (u32, Evidence))>;

/// [`SessionFacts`] as kept between runs (`crate::ledger`): every field,
/// maps keyed by tuples as lists of pairs, the index of the kinds of use
/// rebuilt on load.
#[derive(serde::Serialize)]
struct WireRef<'a> {
    agent_kind: &'a str,
    harness_session: &'a str,
    project: &'a Option<String>,
    version: &'a Option<String>,
    first_at: Timestamp,
    last_at: Timestamp,
    files: &'a BTreeSet<String>,
    roles: &'a BTreeSet<String>,
    servers: &'a [NamedServer],
    facts: Vec<&'a Evidence>,
    calls: &'a BTreeMap<String, HashMap<String, Call>>,
    call_ids: usize,
    counted: Vec<(&'a (String, String, String), &'a Counted)>,
    uses: &'a BTreeMap<String, HashMap<String, (Timestamp, u32)>>,
    use_ids: usize,
    use_kinds: &'a [Evidence],
    uses_counted: UsesCounted<'a>,
}

/// [`WireRef`], read back.
#[derive(serde::Deserialize)]
struct Wire {
    agent_kind: String,
    harness_session: String,
    project: Option<String>,
    version: Option<String>,
    first_at: Timestamp,
    last_at: Timestamp,
    files: BTreeSet<String>,
    #[serde(default)]
    roles: BTreeSet<String>,
    servers: Vec<NamedServer>,
    facts: Vec<Evidence>,
    calls: BTreeMap<String, HashMap<String, Call>>,
    call_ids: usize,
    counted: Vec<((String, String, String), Counted)>,
    uses: BTreeMap<String, HashMap<String, (Timestamp, u32)>>,
    use_ids: usize,
    use_kinds: Vec<Evidence>,
    uses_counted: Vec<((String, String), (u32, Evidence))>,
}

impl serde::Serialize for SessionFacts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireRef {
            agent_kind: &self.agent_kind,
            harness_session: &self.harness_session,
            project: &self.project,
            version: &self.version,
            first_at: self.first_at,
            last_at: self.last_at,
            files: &self.files,
            roles: &self.roles,
            servers: &self.servers,
            facts: self.facts.iter().map(|f| &f.0).collect(),
            calls: &self.calls,
            call_ids: self.call_ids,
            counted: self.counted.iter().collect(),
            uses: &self.uses,
            use_ids: self.use_ids,
            use_kinds: &self.use_kinds,
            uses_counted: self.uses_counted.iter().collect(),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for SessionFacts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let w = Wire::deserialize(deserializer)?;
        let use_kind_index = w
            .use_kinds
            .iter()
            .enumerate()
            .map(|(i, e)| (UseKind(e.clone()), u32::try_from(i).unwrap_or(u32::MAX)))
            .collect();
        Ok(SessionFacts {
            agent_kind: w.agent_kind,
            harness_session: w.harness_session,
            project: w.project,
            version: w.version,
            first_at: w.first_at,
            last_at: w.last_at,
            files: w.files,
            roles: w.roles,
            servers: w.servers,
            facts: w.facts.into_iter().map(Fact).collect(),
            calls: w.calls,
            call_ids: w.call_ids,
            counted: w.counted.into_iter().collect(),
            uses: w.uses,
            use_ids: w.use_ids,
            use_kinds: w.use_kinds,
            use_kind_index,
            uses_counted: w.uses_counted.into_iter().collect(),
        })
    }
}
