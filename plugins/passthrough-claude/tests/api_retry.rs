//! Issue 67: a headless run whose model API cannot be reached prints a
//! `system/api_retry` line per failed attempt while it retries; one killed
//! or timed out mid-retry ends on those, with no `result` line. Each is
//! read as the session's error (report-level, no server's), in the words
//! the run's end uses, with a status and a class at most: never the
//! error's text.
//!
//! The lines are as real runs printed them (`claude -p hi --output-format
//! stream-json --verbose`, `ANTHROPIC_BASE_URL` on a closed 127.0.0.1
//! port, a private HOME): 2.1.197 (pinned) writes `retry_delay_ms` as a
//! fraction, 2.1.332 (newest) as a whole number; the statuses and classes
//! are the shipped code's (`model_api::retrying`).

use tether_core::model::{Evidence, Timestamp};
use tether_core::records::RecordAnswer;
use tether_core::vocab::{EvidenceKind, ReasonCode};
use tether_passthrough_claude::records::{STREAM_JSON, TRANSCRIPT, plain, read_as};

/// 2.1.197's first retry on a closed port, as printed.
const PINNED: &str = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":527.9221046400702,"error_status":null,"error":"unknown","session_id":"c40d7bcd-4c92-4c83-bdf3-71ca4892da97","uuid":"2bf29e6f-2f83-4b38-9508-e7d5e6987e31"}"#;
/// 2.1.332's, as printed.
const NEWEST: &str = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":502,"error_status":null,"error":"unknown","session_id":"84f50d4e-4312-4119-b5cb-21fb97031bc2","uuid":"3f283e4e-d037-4175-b0c5-1b865c79727e"}"#;

/// What one line gives, read the fast way and the plain way (the same,
/// asserted).
fn read(line: &str) -> RecordAnswer {
    let fast = read_as(STREAM_JSON, &["run.jsonl"], line);
    assert_eq!(fast, plain::stream_json(line), "{line}");
    fast
}

fn errors(line: &str) -> Vec<Evidence> {
    match read(line) {
        RecordAnswer::Read(reading) => reading.evidence,
        other => panic!("{line}: {other:?}"),
    }
}

/// GIVEN each release's retry line on a closed port WHEN read THEN it is
/// one report-level error (no server), `session_request_failed`, "its
/// model API could not be reached", in the session the line names, read
/// after the run's end (at 1: a `result` line, read at 0, is kept where
/// both are there).
#[test]
fn each_release_s_retry_on_a_closed_port_is_the_session_s_error() {
    for (line, session) in [
        (PINNED, "c40d7bcd-4c92-4c83-bdf3-71ca4892da97"),
        (NEWEST, "84f50d4e-4312-4119-b5cb-21fb97031bc2"),
    ] {
        let RecordAnswer::Read(reading) = read(line) else {
            panic!("{line}");
        };
        assert_eq!(reading.session.as_deref(), Some(session), "{line}");
        let [error] = reading.evidence.as_slice() else {
            panic!("{line}: {:?}", reading.evidence);
        };
        assert_eq!(error.kind, EvidenceKind::ExplicitError, "{line}");
        assert_eq!(error.server, None, "report-level: {line}");
        assert_eq!(error.at, Timestamp(1), "{line}");
        assert_eq!(
            error.reason_code,
            Some(ReasonCode::SessionRequestFailed),
            "{line}"
        );
        let words = error.summary.as_deref().unwrap_or_default();
        assert!(
            words.starts_with("its model API could not be reached: "),
            "{line}: {words}"
        );
    }
}

/// GIVEN retry lines with an HTTP status (401, 403, 529 overloaded, 429),
/// 2.1.332's first-byte timeout (`no_response`), and an `error` that is no
/// class of the shipped list (a planted secret) WHEN read THEN the
/// credentials refused read `auth_rejected` in the run's end's words, a
/// status is said with its class, the timeout is `timeout`, and nothing
/// but a known class is ever shown.
#[test]
fn a_retry_s_status_and_class_say_why_and_nothing_else_is_kept() {
    let line = |status: &str, error: &str, extra: &str| {
        NEWEST
            .replace(
                r#""error_status":null"#,
                &format!(r#""error_status":{status}"#),
            )
            .replace(
                r#""error":"unknown""#,
                &format!(r#""error":{error}{extra}"#),
            )
    };
    for (written, reason, words) in [
        (
            line("401", r#""authentication_failed""#, ""),
            ReasonCode::AuthRejected,
            "its model provider refused the credentials it sent (it retried)",
        ),
        (
            line("403", r#""authentication_failed""#, ""),
            ReasonCode::AuthRejected,
            "its model provider refused the credentials it sent (it retried)",
        ),
        (
            line("529", r#""overloaded""#, ""),
            ReasonCode::ServerError,
            "its model API answered HTTP 529 (overloaded) (it retried)",
        ),
        (
            line("429", r#""rate_limit""#, ""),
            ReasonCode::ServerError,
            "its model API answered HTTP 429 (rate_limit) (it retried)",
        ),
        (
            line(
                "null",
                r#""unknown""#,
                r#","no_response":{"waited_ms":30000,"retry_wait_ms":30000}"#,
            ),
            ReasonCode::Timeout,
            "its model API could not be reached: it sent no answer in time (it retried)",
        ),
        (
            line("500", r#""sk-ant-api03-PLANTED""#, ""),
            ReasonCode::ServerError,
            "its model API answered HTTP 500 (it retried)",
        ),
        (
            line("null", r#"{"message":"sk-ant-api03-PLANTED"}"#, ""),
            ReasonCode::SessionRequestFailed,
            "its model API could not be reached: its request got no HTTP answer (it retried)",
        ),
    ] {
        let [error] = errors(&written).try_into().expect("one error");
        assert_eq!(error.reason_code, Some(reason), "{written}");
        assert_eq!(error.summary.as_deref(), Some(words), "{written}");
        assert!(!format!("{error:?}").contains("PLANTED"), "{written}");
    }
}

/// 2.1.332's transcript record of the same retry (a real run on a closed
/// port), as written.
const NEWEST_RECORD: &str = r#"{"parentUuid":"b0605113-def4-4234-a7ea-65ed8af7734e","isSidechain":false,"type":"system","subtype":"api_error","level":"error","error":{"message":"Connection error.","formatted":"Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)","connection":{"code":"ECONNREFUSED","message":"ECONNREFUSED: Unable to connect. Is the computer able to access the url?","isSSLError":false},"isNetworkDown":true,"rateLimits":null,"noResponse":null},"retryInMs":502,"retryAttempt":1,"maxRetries":10,"source":"request_retry","timestamp":"2026-12-07T18:45:52.196Z","uuid":"4218f148-88a1-44bd-be5a-8ec5da64e938","userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/tmp.hy7UIjd4hw","sessionId":"84f50d4e-4312-4119-b5cb-21fb97031bc2","version":"2.1.332","gitBranch":"HEAD"}"#;

/// GIVEN 2.1.332's transcript `system/api_error` record (read the fast way
/// and the plain way, the same) WHEN read THEN it is the session's error
/// at its own time, its cause from `connection.code` in the words the run's
/// end uses (`connection_refused`); a status reads as the stream's line
/// does; the error's words (`message`, `formatted`) are never kept.
#[test]
fn the_newest_transcript_s_retry_record_says_its_cause() {
    let transcript = |record: &str| {
        let fast = read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], record);
        assert_eq!(fast, plain::transcript(record), "{record}");
        match fast {
            RecordAnswer::Read(reading) => reading,
            other => panic!("{record}: {other:?}"),
        }
    };
    let reading = transcript(NEWEST_RECORD);
    assert_eq!(
        reading.session.as_deref(),
        Some("84f50d4e-4312-4119-b5cb-21fb97031bc2")
    );
    let [error] = reading.evidence.as_slice() else {
        panic!("{:?}", reading.evidence);
    };
    assert_eq!(error.kind, EvidenceKind::ExplicitError);
    assert_eq!(error.server, None);
    assert_eq!(Some(error.at), reading.at);
    assert_eq!(error.reason_code, Some(ReasonCode::ConnectionRefused));
    assert_eq!(
        error.summary.as_deref(),
        Some(
            "its model API could not be reached: nothing listened there (connection refused) (it retried)"
        )
    );
    let planted = NEWEST_RECORD
        .replace("Connection error.", "sk-ant-api03-PLANTED")
        .replace("Connection refused \u{2014}", "sk-ant-api03-PLANTED");
    let reading = transcript(&planted);
    assert!(!format!("{reading:?}").contains("PLANTED"));
    let with_status = NEWEST_RECORD.replace(
        r#""connection":{"code":"ECONNREFUSED""#,
        r#""status":529,"connection":{"code":"ECONNREFUSED""#,
    );
    let reading = transcript(&with_status);
    assert_eq!(
        reading.evidence[0].summary.as_deref(),
        Some("its model API answered HTTP 529 (it retried)")
    );
    let odd = NEWEST_RECORD.replace(r#""error":{"message""#, r#""error":"x","was":{"message""#);
    assert_eq!(
        read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], &odd),
        RecordAnswer::Unparsed {
            why: tether_core::records::Unparsed::WrongType,
            kind: Some("system/api_error".to_owned())
        },
        "{odd}"
    );
}

/// The record each release wrote in the model's place when its run ended
/// in an error of its model API (real runs on a closed port,
/// `CLAUDE_CODE_MAX_RETRIES=1`), as written: 2.1.197's, then 2.1.332's.
const ENDED: [&str; 2] = [
    r#"{"parentUuid":"51984da7-2ed0-4214-88d3-f4b36d511c90","isSidechain":false,"type":"assistant","uuid":"665ab143-efdd-48b5-a336-62afdefd1f7a","timestamp":"2026-12-07T18:47:29.909Z","message":{"id":"3927d711-b7cd-4c69-9099-dada6432edf8","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":null,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":null,"iterations":null,"speed":null},"content":[{"type":"text","text":"API Error: Unable to connect to API (ConnectionRefused)"}],"context_management":null},"error":"server_error","isApiErrorMessage":true,"userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/tmp.hi3zm3A1UM","sessionId":"5980546e-bead-41d2-aa6d-c7da433be90c","version":"2.1.197","gitBranch":"HEAD"}"#,
    r#"{"parentUuid":"393d9ea6-6552-4d9f-a583-d2e163598682","isSidechain":false,"type":"assistant","uuid":"94ceccff-13dc-4286-944d-03d1455fb996","timestamp":"2026-12-07T18:47:33.932Z","message":{"diagnostics":null,"id":"d556d59c-486b-4833-9ae3-0a379e14e21d","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","usage":{"output_tokens_details":null,"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":null,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":null,"iterations":null,"speed":null,"fallback_credit":null},"content":[{"type":"text","text":"API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"}],"context_management":null},"apiError":"connection_failed","error":"server_error","isApiErrorMessage":true,"perTurnEffort":"medium","failedResponseHadNoToolCall":true,"madeBy":"model","userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/tmp.7v8F460Bgi","sessionId":"5fb44f72-3610-4078-8cdc-9ddbf24e11c6","version":"2.1.332","gitBranch":"HEAD"}"#,
];

/// GIVEN each release's transcript record of a run that ended in an error
/// of its model API (read the fast way and the plain way, the same) WHEN
/// read THEN it is the session's error, `connection_refused`, in the words
/// the stream-json `result` line reads as, never the harness's; the same
/// record as a model's answer (no `isApiErrorMessage`) says nothing.
#[test]
fn each_release_s_end_in_a_model_api_error_is_the_session_s_error() {
    for record in ENDED {
        let fast = read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], record);
        assert_eq!(fast, plain::transcript(record), "{record}");
        let RecordAnswer::Read(reading) = fast else {
            panic!("{record}");
        };
        let [error] = reading.evidence.as_slice() else {
            panic!("{record}: {:?}", reading.evidence);
        };
        assert_eq!(error.kind, EvidenceKind::ExplicitError);
        assert_eq!(error.server, None);
        assert_eq!(error.reason_code, Some(ReasonCode::ConnectionRefused));
        assert_eq!(
            error.summary.as_deref(),
            Some("its model API could not be reached: nothing listened there (connection refused)")
        );
        let answered = record.replace(
            r#""isApiErrorMessage":true"#,
            r#""isApiErrorMessage":false"#,
        );
        let RecordAnswer::Read(reading) =
            read_as(TRANSCRIPT, &["projects", "-tmp-w", "s.jsonl"], &answered)
        else {
            panic!("{answered}");
        };
        assert!(
            reading.evidence.is_empty(),
            "{answered}: {:?}",
            reading.evidence
        );
    }
}
