//! Properties of the sanitizer: planted secrets never come out, and summaries
//! are at most 256 bytes of valid UTF-8.

use proptest::prelude::*;
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::sanitize::{self, SUMMARY_MAX_BYTES, Scrubber};
use tether_core::vocab::{EvidenceKind, ReasonCode, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, KeyValue, ServerSpec};
use tether_hub::{AttemptRequest, Hub};

/// A secret: 12–40 letters and digits, with at least one of each.
fn secret() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]{12,40}".prop_filter("mixed letters and digits", |s| {
        s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
    })
}

/// Words honest tool, server and plugin names are made of.
const WORDS: &[&str] = &[
    "fetch",
    "the",
    "current",
    "weather",
    "forecast",
    "for",
    "a",
    "given",
    "city",
    "and",
    "country",
    "code",
    "tether",
    "no",
    "such",
    "plugin",
    "list",
    "open",
    "pull",
    "requests",
    "repository",
    "issues",
    "search",
    "documents",
    "by",
    "query",
    "create",
    "branch",
    "from",
    "default",
    "get",
    "file",
    "contents",
    "update",
    "calendar",
    "event",
    "send",
    "message",
    "to",
    "channel",
    "read",
    "database",
    "table",
    "schema",
    "run",
    "browser",
    "screenshot",
    "page",
    "navigate",
    "click",
    "element",
    "http",
    "json",
    "api",
    "mcp",
    "server",
    "time",
    "zone",
    "convert",
    "timestamp",
    "kubernetes",
    "pods",
    "namespace",
    "strength",
    "rhythm",
];

/// Free text around a planted secret, never containing a newline-free secret itself.
fn noise() -> impl Strategy<Value = String> {
    "[a-z ,.:()\\-]{0,60}"
}

fn assert_clean(out: &str, secret: &str) -> Result<(), TestCaseError> {
    prop_assert!(!out.contains(secret), "secret {secret:?} leaked in {out:?}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// GIVEN a URL with secrets in userinfo, path, query and fragment THEN the target keeps only the origin.
    #[test]
    fn url_targets_keep_only_the_origin(s in secret(), user in secret(), port in 1u16..65535) {
        let url = format!("https://{user}:{s}@mcp.example.com:{port}/{s}/x?token={s}&q={s}#{s}");
        let target = sanitize::network_target(&url);
        assert_clean(&target, &s)?;
        assert_clean(&target, &user)?;
        let expected_port = if port == 443 { String::new() } else { format!(":{port}") };
        prop_assert_eq!(target, format!("https://mcp.example.com{expected_port}"));
    }

    /// GIVEN error text with a secret in a recognizable shape THEN the summary drops it.
    #[test]
    fn shaped_secrets_in_error_text_are_scrubbed(
        s in secret(),
        before in noise(),
        after in noise(),
        shape in 0usize..14,
    ) {
        let planted = match shape {
            0 => format!("Authorization: Bearer {s}"),
            1 => format!("api_key={s}"),
            2 => format!("password: \"{s} more\""),
            3 => format!("sk-{s}"),
            4 => format!("ghp_{s}"),
            5 => format!("github_pat_{s}"),
            6 => format!("https://user:{s}@host.example/"),
            7 => format!("https://host.example/cb?code={s}"),
            8 => format!("/home/{s}/project/src/main.rs"),
            9 => format!("GITHUB_TOKEN={s}"),
            10 => format!("{s}{s}"),
            11 => format!("{{\"client_secret\": \"{s}\"}}"),
            12 => format!("-H 'X-Api-Key: {s}'"),
            _ => format!("C:\\Users\\{s}\\AppData\\x.json"),
        };
        let out = sanitize::summary(&format!("{before} {planted} {after}"));
        assert_clean(&out, &s)?;
        prop_assert!(out.len() <= SUMMARY_MAX_BYTES);
    }

    /// GIVEN a server config with secrets in env, headers, args and URL THEN its
    /// scrubber removes them from any text, however they appear.
    #[test]
    fn configured_secrets_never_survive_the_servers_scrubber(
        env_value in secret(),
        header_value in secret(),
        arg in secret(),
        query in secret(),
        user in secret(),
        flag_value in secret(),
        before in noise(),
        after in noise(),
    ) {
        let spec = ServerSpec::new(
            "srv",
            ServerSource::Profile,
            Endpoint::Stdio {
                command: format!("/home/{user}/bin/srv"),
                args: vec!["--key".into(), arg.clone(), format!("--token={flag_value}")],
                env: vec![KeyValue::new("MY_VAR", env_value.clone())],
                cwd: None,
            },
        )
        .or(Endpoint::Http {
            url: format!("http://127.0.0.1:9/mcp?sig={query}"),
            headers: vec![KeyValue::new("X-Custom", header_value.clone())],
        });
        let scrubber: Scrubber = spec.scrubber();
        let text = format!(
            "{before} spawn /home/{user}/bin/srv --key {arg} with MY_VAR {env_value}; \
             header {header_value}; sig {query}; token {flag_value} {after}"
        );
        let out = scrubber.summary(&text);
        for s in [&env_value, &header_value, &arg, &query, &user, &flag_value] {
            assert_clean(&out, s)?;
        }
        prop_assert!(out.len() <= SUMMARY_MAX_BYTES);
        for endpoint in &spec.endpoints {
            let target = endpoint.target();
            for s in [&env_value, &header_value, &arg, &query, &user] {
                assert_clean(&target, s)?;
            }
        }
        let debug = format!("{spec:?}");
        for s in [&env_value, &header_value, &arg, &query, &user, &flag_value] {
            assert_clean(&debug, s)?;
        }
    }

    /// GIVEN a long, honest name (words joined by `_`, `-` or case, with
    /// version digits) THEN it is kept as it is: a name is redacted only
    /// for a configured secret or a credential's form, never for its
    /// length and its mix of letters and digits.
    #[test]
    fn long_honest_names_are_kept(
        words in proptest::sample::subsequence(WORDS, 4..12).prop_shuffle(),
        join in 0usize..3,
        suffix in prop_oneof![Just(String::new()), (1u32..99).prop_map(|n| format!("v{n}")),
            (1u32..9, 1u32..9).prop_map(|(a, b)| format!("{a}e{b}")), (2000u32..2100).prop_map(|y| y.to_string())],
    ) {
        let mut parts: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        if !suffix.is_empty() {
            parts.push(suffix);
        }
        let name = match join {
            0 => parts.join("_"),
            1 => parts.join("-"),
            _ => parts
                .iter()
                .map(|p| {
                    let mut c = p.chars();
                    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
                })
                .collect(),
        };
        prop_assume!(name.len() <= sanitize::NAME_MAX_BYTES);
        prop_assert_eq!(sanitize::name(&name), name.clone());
        prop_assert_eq!(sanitize::summary(&format!("tool {name} failed")), format!("tool {name} failed"));
    }

    /// GIVEN a credential's form standing alone (a run of letters broken by
    /// digits, a hex digest, a UUID, a JWT) THEN the name drops it.
    #[test]
    fn credential_forms_are_redacted_in_names(
        s in "[A-Za-z0-9]{24,40}".prop_filter("digits break the letters twice", |s| {
            s[..s.len() - 4].split(|c: char| c.is_ascii_alphabetic()).filter(|r| !r.is_empty()).count() >= 2
                && s.bytes().any(|b| b.is_ascii_alphabetic())
        }),
        hex in "[0-9a-f]{40}".prop_filter("a digit", |s| s.bytes().any(|b| b.is_ascii_digit())),
        shape in 0usize..5,
    ) {
        let planted = match shape {
            0 => s.clone(),
            1 => hex.clone(),
            2 => format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]),
            3 => format!("eyJhbGciOiJIUzI1NiJ9.{s}.{s}"),
            _ => format!("tool_{s}"),
        };
        let out = sanitize::name(&planted);
        prop_assert!(out.contains(sanitize::REDACTED), "{planted:?} came out as {out:?}");
        assert_clean(&out, &s)?;
    }

    /// GIVEN any text THEN the summary is valid UTF-8 of at most 256 bytes.
    #[test]
    fn summaries_are_bounded_utf8(text in "\\PC{0,2000}") {
        let out = sanitize::summary(&text);
        prop_assert!(out.len() <= SUMMARY_MAX_BYTES);
        prop_assert!(std::str::from_utf8(out.as_bytes()).is_ok());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// GIVEN secrets planted in a server's config and echoed in evidence WHEN the
    /// hub stores them THEN the serialized history contains none of them.
    #[test]
    fn the_stored_history_never_holds_a_planted_secret(
        env_value in secret(),
        header_value in secret(),
        arg in secret(),
        user in secret(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let hub = Hub::new(Registry::empty());
        let servers = vec![
            ServerSpec::new(
                "stdio-one",
                ServerSource::Profile,
                Endpoint::Stdio {
                    command: format!("/home/{user}/bin/srv"),
                    args: vec![arg.clone()],
                    env: vec![KeyValue::new("TOKEN", env_value.clone())],
                    cwd: Some(format!("/home/{user}/work")),
                },
            ),
            ServerSpec::new(
                "http-one",
                ServerSource::Profile,
                Endpoint::Http {
                    url: format!("https://{user}:{arg}@mcp.example.com/{arg}?k={env_value}"),
                    headers: vec![KeyValue::new("Authorization", format!("Bearer {header_value}"))],
                },
            ),
        ];
        let handle = hub
            .begin_attempt(AttemptRequest::new(tether_core::Owner { task: "t".into(), session: "s".into(), execution: "e".into() }, "gemini", DriveMode::Passthrough, Trigger::PassthroughStart, servers))
            .expect("begin");
        let echo = format!("failed with {env_value} and {header_value} and {arg} in /home/{user}/x");
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::ExplicitError, Timestamp(5))
                    .server("stdio-one")
                    .reason(ReasonCode::ProcessStartFailed, Some(echo.clone())),
            )
            .expect("publish");
        handle
            .sink
            .publish(
                Evidence::new(EvidenceKind::ExplicitError, Timestamp(6))
                    .reason(ReasonCode::SessionRequestFailed, Some(echo)),
            )
            .expect("publish");
        runtime.block_on(hub.flush());
        let history = hub.snapshot("s").expect("history");
        let json = serde_json::to_string(&history).expect("json");
        let copied = tether_words::display::copy_diagnostics(&history);
        for s in [&env_value, &header_value, &arg, &user] {
            assert_clean(&json, s)?;
            assert_clean(&copied, s)?;
        }
        prop_assert!(history.current().expect("current").report_error.is_some());
    }
}
