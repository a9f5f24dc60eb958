//! A harness's identity: [`HarnessId`], the one name a harness has across
//! Tether (its plugin's first agent kind, its configuration scanner's
//! harness, the prefix of its sessions, `KIND:ID`). [`Registry::harnesses`]
//! lists the harnesses a registry holds.
//!
//! [`Registry::harnesses`]: crate::registry::Registry::harnesses

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// The longest harness name.
pub const MAX_HARNESS_ID: usize = 32;

/// A harness's name: 1 to 32 characters, lowercase ASCII letters, digits
/// and `-`, starting with a letter (`claude`, `gemini-cli`). Serialized as
/// the plain string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HarnessId(String);

/// A name that is not a harness name, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HarnessIdError(&'static str);

impl HarnessId {
    /// The name, checked.
    pub fn new(name: &str) -> Result<Self, HarnessIdError> {
        if name.is_empty() || name.len() > MAX_HARNESS_ID {
            return Err(HarnessIdError("a harness name has 1 to 32 characters"));
        }
        if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(HarnessIdError(
                "a harness name starts with a lowercase letter",
            ));
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(HarnessIdError(
                "a harness name holds lowercase letters, digits and `-` only",
            ));
        }
        Ok(HarnessId(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for HarnessId {
    type Error = HarnessIdError;
    fn try_from(name: String) -> Result<Self, Self::Error> {
        HarnessId::new(&name)
    }
}

impl From<HarnessId> for String {
    fn from(id: HarnessId) -> String {
        id.0
    }
}

impl std::str::FromStr for HarnessId {
    type Err = HarnessIdError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        HarnessId::new(name)
    }
}

impl AsRef<str> for HarnessId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for HarnessId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for HarnessId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for HarnessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for HarnessId {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("HarnessId")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[a-z][a-z0-9-]{0,31}$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_name_is_checked_and_serializes_as_itself() {
        for good in ["claude", "gemini-cli", "q2"] {
            let id = HarnessId::new(good).expect(good);
            assert_eq!(
                serde_json::to_string(&id).expect("json"),
                format!("\"{good}\"")
            );
            let back: HarnessId = serde_json::from_str(&format!("\"{good}\"")).expect("back");
            assert_eq!(back, id);
        }
        for bad in [
            "",
            "Claude",
            "-x",
            "2x",
            "a b",
            "a_b",
            "x/../y",
            &"a".repeat(33),
        ] {
            assert!(HarnessId::new(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<HarnessId>(&format!("{bad:?}")).is_err());
        }
    }
}
