//! The user guide (`book/`) cannot fall behind the code:
//! - its generated pages (every status, verdict, reason code and stage; every
//!   command and flag) are what `tether explain` generates today
//!   (`TETHER_UPDATE_BOOK=1` rewrites them);
//! - every JSON document `tether schema` knows is in it;
//! - every page is in its table of contents, and every link and anchor
//!   inside it resolves;
//! - every command chapter 1 shows runs, and prints what the page says, with
//!   times, durations and temporary paths masked.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../book")
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tether(args: &[&str]) -> String {
    let out = Command::new(tether_tests::workspace_bin("tether"))
        .args(args)
        .output()
        .expect("tether runs");
    assert!(out.status.success(), "tether {args:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(book().join("src").join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// GIVEN the vocabulary and the parser as they are WHEN the book's
/// generated pages are compared with what `tether explain` generates THEN
/// they are the same, so a new status, reason code, stage, command or flag
/// cannot exist without its entry in the book.
#[test]
fn generated_pages_are_what_the_code_generates_today() {
    for (rel, args) in [
        ("reference/codes.md", ["explain", "--markdown"]),
        ("reference/cli.md", ["explain", "--cli-markdown"]),
    ] {
        let fresh = tether(&args);
        let path = book().join("src").join(rel);
        if std::env::var_os("TETHER_UPDATE_BOOK").is_some() {
            std::fs::write(&path, &fresh).expect("write");
            continue;
        }
        let on_page = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_page == fresh,
            "book/src/{rel} is behind the code: run TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test book"
        );
    }
    // What the generated pages must hold, named once more from the code's side.
    let codes = read("reference/codes.md");
    for entry in tether_words::explain::all() {
        assert!(
            codes.contains(&format!("### {}", entry.code)),
            "{}",
            entry.code
        );
    }
    let cli = read("reference/cli.md");
    for sub in [
        "probe",
        "endpoint-test",
        "inventory",
        "sessions import",
        "collect",
        "serve",
        "explain",
    ] {
        assert!(cli.contains(&format!("## `tether {sub}`")), "{sub}");
    }
    assert!(cli.contains("`--sessions`"), "a flag added this round");
}

/// GIVEN every document `tether schema` can print WHEN the book's
/// documents page is read THEN each is on it.
#[test]
fn every_json_document_is_in_the_book() {
    let cli = tether(&["explain", "--cli-markdown"]);
    let schema = cli
        .split("## `tether schema`")
        .nth(1)
        .and_then(|s| s.split("One of: ").nth(1))
        .and_then(|s| s.lines().next())
        .expect("the schema command's documents");
    let names: Vec<&str> = schema
        .split(", ")
        .map(|n| n.trim_matches(|c| c == '`' || c == '.'))
        .collect();
    assert!(names.len() >= 15, "{names:?}");
    let page = read("reference/documents.md");
    for name in names {
        assert!(
            page.contains(&format!("`tether schema {name}`")),
            "the document {name} is not in book/src/reference/documents.md"
        );
    }
}

/// mdBook's heading ids: lower case, spaces to `-`, only letters, digits,
/// `-` and `_` kept.
fn heading_id(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// The page's text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| heading_id(l.trim_start_matches('#')))
        .collect()
}

fn pages() -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![book().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(book().join("src")).expect("inside");
                found.push(rel.display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// GIVEN every page of the book WHEN its links are followed THEN each page
/// is in SUMMARY.md, every relative link names a file of the book (or a
/// screenshot the browser tests take), and every anchor is a heading of its
/// page.
#[test]
fn every_page_is_listed_and_every_link_and_anchor_resolves() {
    let summary = read("SUMMARY.md");
    for page in pages() {
        if page != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({page})")),
                "{page} is not in SUMMARY.md"
            );
        }
    }
    let specs: String = [
        "desktop.spec.mjs",
        "mobile.spec.mjs",
        "fleet-desktop.spec.mjs",
        "fleet-mobile.spec.mjs",
    ]
    .iter()
    .map(|s| std::fs::read_to_string(workspace().join("tests/web/specs").join(s)).expect("spec"))
    .collect();
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let dir = Path::new(&page)
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        for cap in link.captures_iter(&prose(&text)) {
            let target = &cap[1];
            if target.starts_with("http://") || target.starts_with("https://") {
                panic!("{page}: {target}: the book links nowhere outside itself (no network here)");
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target, None),
            };
            checked += 1;
            if let Some(shot) = file.strip_prefix("generated/") {
                assert!(
                    specs.contains(&format!("'{shot}'")),
                    "{page}: {target}: no browser test takes that screenshot"
                );
                continue;
            }
            let resolved = if file.is_empty() {
                PathBuf::from(&page)
            } else {
                normalize(&dir.join(file))
            };
            let on_disk = book().join("src").join(&resolved);
            assert!(
                on_disk.is_file(),
                "{page}: {target}: no such file in the book"
            );
            if let Some(anchor) = anchor {
                let there = std::fs::read_to_string(&on_disk).expect("read");
                assert!(
                    anchors(&there).contains(anchor),
                    "{page}: {target}: no heading #{anchor} in {}",
                    resolved.display()
                );
            }
        }
    }
    assert!(checked > 30, "the checker found the links ({checked})");
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                assert!(out.pop(), "{}: leaves the book", path.display());
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Times, durations and temporary paths: what differs on every run.
fn masked(text: &str) -> String {
    let tmp = regex::Regex::new(r"/tmp/\S+").expect("regex");
    let duration = regex::Regex::new(r"\b\d+(\.\d+)? ?(ms|s)\b").expect("regex");
    text.lines()
        .map(|l| {
            let l = tmp.replace_all(l, "/tmp/…");
            duration.replace_all(&l, "<duration>").trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_owned()
}

/// Every ```console block of a page: (the command after `$ `, its output).
fn console_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```console" {
            continue;
        }
        let mut body: Vec<&str> = Vec::new();
        for line in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            body.push(line);
        }
        let command = body
            .first()
            .and_then(|l| l.strip_prefix("$ "))
            .expect("a console block starts with `$ `")
            .to_owned();
        blocks.push((command, body[1..].join("\n")));
    }
    blocks
}

/// GIVEN chapter 1 WHEN each command it shows runs, from the repository's
/// root, as a new user would type it THEN it prints what the page shows
/// (times, durations and temporary paths masked).
#[test]
fn every_command_in_chapter_one_prints_what_the_page_shows() {
    let page = read("start.md");
    let blocks = console_blocks(&page);
    assert!(blocks.len() >= 5, "{blocks:?}");
    let home = tempfile::tempdir().expect("home");
    for (command, shown) in blocks {
        let mut words = command.split_whitespace().peekable();
        let mut cmd: Option<Command> = None;
        let mut env = Vec::new();
        for word in words.by_ref() {
            match (cmd.as_mut(), word.split_once('=')) {
                (None, Some((k, v))) if k.chars().all(|c| c.is_ascii_uppercase() || c == '_') => {
                    env.push((k.to_owned(), workspace().join(v)));
                }
                (None, _) => {
                    let bin = word
                        .strip_prefix("./target/debug/")
                        .expect("chapter 1 runs the workspace's own binaries");
                    cmd = Some(Command::new(tether_tests::workspace_bin(bin)));
                }
                (Some(c), _) => {
                    let arg = match word.strip_prefix("./target/debug/") {
                        Some(bin) => tether_tests::workspace_bin(bin).display().to_string(),
                        None => word.to_owned(),
                    };
                    c.arg(arg);
                }
            }
        }
        let mut cmd = cmd.expect("a command");
        cmd.current_dir(workspace())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .envs(env)
            .stdin(std::process::Stdio::null());
        let out = cmd.output().expect("runs");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            masked(&printed),
            masked(&shown),
            "`{command}` printed something else than book/src/start.md shows (exit {:?}; stderr: {})",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
