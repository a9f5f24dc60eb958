//! Claude Code's own skills, bundled with the CLI: every session lists
//! them, whatever its user installed (13 in 2.1.197, 18 in 2.1.332). Taken
//! from the `skills` of the `system/init` line of real headless runs with
//! an empty private home (no user, project or plugin skill), one per
//! release; and the bundled skills the model is offered that the init
//! line's `skills` leaves out (its slash-command skills), taken from the
//! `skill_listing` attachment's `names` in the same runs' transcripts. A
//! renderer collapses them into one line unless asked.

/// 2.1.197's bundled skills (a real run here, 2026-12-07).
pub const SKILLS_2_1_197: &[&str] = &[
    "deep-research",
    "design-sync",
    "update-config",
    "verify",
    "debug",
    "code-review",
    "simplify",
    "batch",
    "fewer-permission-prompts",
    "loop",
    "claude-api",
    "run",
    "run-skill-generator",
];

/// 2.1.332's bundled skills (a real run here, 2026-12-07).
pub const SKILLS_2_1_332: &[&str] = &[
    "deep-research",
    "design",
    "design-sync",
    "dataviz",
    "update-config",
    "verify",
    "debug",
    "code-review",
    "simplify",
    "batch",
    "fewer-permission-prompts",
    "doctor",
    "loop",
    "claude-api",
    "workflow-authoring",
    "run",
    "run-skill-generator",
    "plugin-authoring",
];

/// 2.1.197's bundled skills offered to the model (its transcript's
/// `skill_listing` `names`, an empty home, a real run here, 2026-12-07)
/// that its init line's `skills` does not name.
pub const LISTED_2_1_197: &[&str] = &["init", "keybindings-help", "review", "security-review"];

/// 2.1.332's, the same way (a real run here, 2026-12-07).
pub const LISTED_2_1_332: &[&str] = &["init", "keybindings-help", "security-review"];

/// Whether `skill` (of no plugin: a plugin's skill is never Claude Code's
/// own) is one Claude Code bundles in a release seen here. A user's skill
/// of the same name reads as built in: Claude Code lists one name once.
pub fn is_builtin_skill(skill: &str, plugin: Option<&str>) -> bool {
    plugin.is_none()
        && [
            SKILLS_2_1_197,
            SKILLS_2_1_332,
            LISTED_2_1_197,
            LISTED_2_1_332,
        ]
        .iter()
        .any(|list| list.contains(&skill))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_skills_are_built_in_and_others_are_not() {
        assert_eq!(SKILLS_2_1_197.len(), 13);
        assert_eq!(SKILLS_2_1_332.len(), 18);
        assert!(is_builtin_skill("simplify", None));
        assert!(is_builtin_skill("doctor", None));
        // Offered to the model, though the init line does not list it.
        assert!(is_builtin_skill("security-review", None));
        assert!(is_builtin_skill("keybindings-help", None));
        assert!(!is_builtin_skill("simplify", Some("my-plugin")));
        assert!(!is_builtin_skill("pdf", None));
    }
}
