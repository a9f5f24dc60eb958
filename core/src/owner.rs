//! Whose an attempt is: the backend's ids, one type each, so that a task id
//! can never be passed where a session id belongs.
//!
//! The documents (`AttachmentHistory`, `AttachmentAttempt`) keep plain
//! strings on the wire; these types are for the APIs that take several ids
//! at once, where a swap would otherwise compile.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as an owned string.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl From<&String> for $name {
            fn from(id: &String) -> Self {
                $name(id.clone())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

id_type!(
    /// The backend's task (a unit of work; one or more sessions).
    TaskId
);
id_type!(
    /// The backend's session (one agent conversation; one history).
    SessionId
);
id_type!(
    /// The backend's execution (one run of the agent's process).
    ExecutionId
);
id_type!(
    /// One attempt within a session (made by the hub, never by a caller).
    AttemptId
);

/// Who an attempt belongs to: the backend's task, session and execution.
///
/// Built by field name, so the three ids cannot trade places:
///
/// ```
/// use tether_core::{Owner, SessionId};
/// let session = SessionId::from("s");
/// let owner = Owner { task: "t".into(), session, execution: "e".into() };
/// assert_eq!(owner.session, "s");
/// ```
///
/// A session id where the task belongs does not compile:
///
/// ```compile_fail
/// use tether_core::{Owner, SessionId};
/// let session = SessionId::from("s");
/// let owner = Owner { task: session, session: "s".into(), execution: "e".into() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner {
    /// The task.
    pub task: TaskId,
    /// The session.
    pub session: SessionId,
    /// The execution.
    pub execution: ExecutionId,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_the_text_they_hold() {
        let owner = Owner {
            task: "t".into(),
            session: String::from("s").into(),
            execution: (&String::from("e")).into(),
        };
        assert_eq!(owner.task.as_str(), "t");
        assert_eq!(owner.session, "s");
        assert_eq!(owner.execution.to_string(), "e");
        assert_eq!(AttemptId::from("a").into_string(), "a");
    }
}
