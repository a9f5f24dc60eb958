//! Claude Code's own skills, bundled with the CLI: every session lists
//! them, whatever its user installed (13 in 2.1.197, 18 in 2.1.332). Taken
//! from the `skills` of the `system/init` line of real headless runs with
//! an empty private home (no user, project or plugin skill), one per
//! release. A renderer collapses them into one line unless asked.

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

/// Whether `skill` (of no plugin: a plugin's skill is never Claude Code's
/// own) is one Claude Code bundles in a release seen here. A user's skill
/// of the same name reads as built in: Claude Code lists one name once.
pub fn is_builtin_skill(skill: &str, plugin: Option<&str>) -> bool {
    plugin.is_none() && (SKILLS_2_1_197.contains(&skill) || SKILLS_2_1_332.contains(&skill))
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
        assert!(!is_builtin_skill("simplify", Some("my-plugin")));
        assert!(!is_builtin_skill("pdf", None));
    }
}
