//! `tether-reference-agent`: a small, real ACP agent on stdio that connects to
//! the MCP servers it is given and calls the tool a prompt names.

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match tether_reference_agent::run(tether_reference_agent::Behaviour::default()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tether-reference-agent: {}", err.message);
            std::process::ExitCode::FAILURE
        }
    }
}
