//! Issue 67 §4: Claude Code's own skills collapse into one line unless
//! asked. The record is the real `skill_listing` attachment a 2.1.197 run
//! wrote here (`tests/fixtures/records/claude`, its names trimmed), its
//! names put back as that release's init line lists them in an empty home
//! (`records::builtin::SKILLS_2_1_197`, a real run), beside a skill of the
//! user's and one of a plugin.
//!
//! - GIVEN that transcript WHEN `sessions show PATH` THEN one line says the
//!   13 built-in skills, and the user's and the plugin's skills have their
//!   own; with `--tools` every skill has its own line; in `--json` each
//!   built-in skill's row says `built_in` and no other row does.
//! - GIVEN the model invoked one built-in skill WHEN shown THEN that skill
//!   keeps its own line (12 collapse), and no built-in skill reads "today's
//!   configuration does not name it" (none is in a configuration file).

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_passthrough_claude::records::builtin::SKILLS_2_1_197;
use tether_tests::by_path::{fixtures, sessions, show_json_at};

const SESSION: &str = "2d8efbcf-e501-440d-89ec-66cb10f9d678";

/// The real fixture's `skill_listing` line with `names` given back, and
/// (where `invoked`) the model's call of that skill after it.
fn transcript(dir: &Path, invoked: Option<&str>) -> PathBuf {
    let mut names: Vec<&str> = SKILLS_2_1_197.to_vec();
    names.extend(["my-notes", "goodplug:greet"]);
    transcript_naming(dir, &names, invoked)
}

/// [`transcript`] with the listing's `names` given.
fn transcript_naming(dir: &Path, names: &[&str], invoked: Option<&str>) -> PathBuf {
    let real = fixtures()
        .join("records/claude/.claude/projects/-tmp--tmpf23dO3")
        .join(format!("{SESSION}.jsonl"));
    let text = std::fs::read_to_string(real).expect("the real transcript");
    let mut listing: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["attachment"]["type"] == "skill_listing")
        .expect("a skill_listing in the real transcript");
    listing["attachment"]["names"] = serde_json::json!(names);
    listing["attachment"]["skillCount"] = serde_json::json!(names.len());
    let mut lines = vec![listing.to_string()];
    if let Some(skill) = invoked {
        let mut call = listing.clone();
        let map = call.as_object_mut().expect("an object");
        map.remove("attachment");
        map.insert("type".into(), "assistant".into());
        map.insert("uuid".into(), "9a1e0f3c-1111-4c6d-8e7f-0a1b2c3d4e5f".into());
        map.insert(
            "message".into(),
            serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_01", "name": "Skill", "input": {"skill": skill}}
            ]}),
        );
        lines.push(call.to_string());
    }
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
    path
}

fn skill_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("skill")).collect()
}

#[test]
fn built_in_skills_are_one_line_unless_asked() {
    let home = tempfile::tempdir().expect("home");
    let path = transcript(home.path(), None);
    let shown = path.display().to_string();
    let (code, text, err) = sessions(home.path(), &["show", &shown]);
    assert_eq!(code, 0, "{err}");
    let lines = skill_lines(&text);
    let collapsed: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("13 built-in skills"))
        .collect();
    assert_eq!(collapsed.len(), 1, "{text}");
    assert!(collapsed[0].starts_with("skills "), "{text}");
    // The user's and the plugin's skills, and no built-in one, on their own.
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines.iter().any(|l| l.contains("my-notes")), "{text}");
    assert!(
        lines.iter().any(|l| l.contains("greet (goodplug)")),
        "{text}"
    );
    assert!(!text.contains("simplify"), "{text}");

    let (code, each, err) = sessions(home.path(), &["show", &shown, "--tools"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(skill_lines(&each).len(), SKILLS_2_1_197.len() + 2, "{each}");
    assert!(!each.contains("built-in skills"), "{each}");

    let (doc, _) = show_json_at(home.path(), &shown);
    let skills: Vec<(&str, bool)> = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["kind"] == "skill")
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default(),
                r["built_in"] == true,
            )
        })
        .collect();
    assert_eq!(skills.len(), SKILLS_2_1_197.len() + 2, "{doc:#}");
    for (name, built_in) in skills {
        assert_eq!(
            built_in,
            SKILLS_2_1_197.contains(&name),
            "{name}: built_in {built_in}"
        );
    }
    assert!(
        doc["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .filter(|r| r["kind"] != "skill")
            .all(|r| r.get("built_in").is_none()),
        "{doc:#}"
    );
}

#[test]
fn an_invoked_built_in_skill_keeps_its_own_line() {
    let home = tempfile::tempdir().expect("home");
    let path = transcript(home.path(), Some("simplify"));
    let (code, text, err) = sessions(home.path(), &["show", &path.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let lines = skill_lines(&text);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("skills ") && l.contains("12 built-in skills")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("skill ") && l.contains("simplify") && l.contains("invoked")),
        "{text}"
    );
    for line in lines
        .iter()
        .filter(|l| l.contains("built-in") || l.contains("simplify"))
    {
        assert!(
            !line.contains("today's configuration does not name it"),
            "{line}"
        );
    }
}

/// GIVEN the `skill_listing` names as a real 2.1.197 run in an empty home
/// wrote them (2026-12-07: the model is offered `init`, `keybindings-help`,
/// `review` and `security-review`, which its init line's `skills` leaves
/// out) WHEN shown THEN all 13 are built in: one line, none on its own,
/// none "today's configuration does not name it".
#[test]
fn the_model_s_listing_of_an_empty_home_is_all_built_in() {
    let real = [
        "deep-research",
        "update-config",
        "keybindings-help",
        "verify",
        "code-review",
        "simplify",
        "fewer-permission-prompts",
        "loop",
        "claude-api",
        "run",
        "init",
        "review",
        "security-review",
    ];
    let home = tempfile::tempdir().expect("home");
    let path = transcript_naming(home.path(), &real, None);
    let (code, text, err) = sessions(home.path(), &["show", &path.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let lines = skill_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with("skills ") && lines[0].contains("13 built-in skills"),
        "{text}"
    );
    assert!(!text.contains("does not name it"), "{text}");
}
