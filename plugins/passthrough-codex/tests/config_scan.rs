//! Codex's configuration scanner against fixture machines: user servers
//! (stdio and http, on and off, tool filters, env-forwarded credentials), a
//! project config in a project that is not trusted, and trust given to the
//! real path of a project reached through a symlink.

use tether_core::inventory::{InventoryDocument, InventoryRow};

fn row<'a>(doc: &'a InventoryDocument, scope: &str, name: &str) -> &'a InventoryRow {
    tether_sdk::scan_fixture::row(doc, "codex", scope, name)
}
use tether_passthrough_codex::config_scan::CodexConfigScanner;
use tether_sdk::scan_fixture::{ON, ScanFixture, assert_states, off, state};

const SECRETS: [&str; 3] = [
    "sekret-codex-env-9e0",
    "sekret-codex-hdr-41f",
    "sekret-token-var-b7",
];

const USER_CONFIG: &str = r#"
model = "o4-mini"

[mcp_servers.x-on]
command = "fake-mcp"
args = ["serve"]
env = { DB_PASSWORD = "sekret-codex-env-9e0", TZ = "UTC" }
required = true
startup_timeout_sec = 20

[mcp_servers.x-off]
command = "fake-mcp"
enabled = false

[mcp_servers.x-http]
url = "https://codex.example.com/mcp"
bearer_token_env_var = "MY_TOKEN"
http_headers = { "X-Team" = "sekret-codex-hdr-41f" }
enabled_tools = ["search"]
disabled_tools = ["delete"]

[projects."/somewhere/else"]
trust_level = "trusted"
"#;

fn fixture() -> ScanFixture {
    let mut f = ScanFixture::new();
    f.var("MY_TOKEN", "sekret-token-var-b7");
    f.home(".codex/config.toml", USER_CONFIG);
    f.project(
        ".codex/config.toml",
        "[mcp_servers.x-proj]\ncommand = \"fake-mcp\"\n",
    );
    f
}

#[test]
fn given_user_and_untrusted_project_servers_then_each_has_its_precise_state_and_no_secret_is_kept()
{
    let f = fixture();
    let doc = f.scan(&CodexConfigScanner);
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    ScanFixture::assert_no_secret(
        "the codex inventory",
        &serde_json::to_string(&doc).expect("json"),
        &SECRETS,
    );
    let expect = [
        ("user", "x-on", ON),
        ("user", "x-off", off("disabled_in_config")),
        ("user", "x-http", ON),
        ("project", "x-proj", off("untrusted_folder")),
    ];
    assert_states(&doc, "codex", &expect);

    let x_http = row(&doc, "user", "x-http");
    assert_eq!(
        x_http.diagnostics.include_tools.as_deref(),
        Some(&["search".to_owned()][..])
    );
    assert_eq!(x_http.diagnostics.exclude_tools, ["delete"]);
    assert!(x_http.diagnostics.env.iter().any(|e| e.name == "MY_TOKEN"));
    assert!(
        x_http
            .diagnostics
            .headers
            .iter()
            .any(|h| h == "Authorization"),
        "the bearer variable becomes an Authorization header: {x_http:#?}"
    );
    assert!(
        row(&doc, "user", "x-on")
            .diagnostics
            .settings
            .contains(&"required=true".to_owned())
    );
}

#[test]
fn given_trust_for_the_real_path_when_the_project_is_reached_through_a_symlink_then_it_is_trusted()
{
    let f = fixture();
    let real = f.project.to_string_lossy().into_owned();
    f.home(
        ".codex/config.toml",
        &format!("{USER_CONFIG}\n[projects.\"{real}\"]\ntrust_level = \"trusted\"\n"),
    );
    let link = f.root().join("link-to-proj");
    std::os::unix::fs::symlink(&f.project, &link).expect("ln");
    let doc = tether_inventory::scan_all(&f.context_for(&link), &[&CodexConfigScanner], &[]);
    assert_eq!(state(row(&doc, "project", "x-proj")), ON, "trusted now");
}
