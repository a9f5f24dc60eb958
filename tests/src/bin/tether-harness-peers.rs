//! `tether-harness-peers --records FILE [--target TOOL] [--arguments JSON]`: the peers a real
//! harness session needs offline, on 127.0.0.1 — the fake model, the OAuth
//! server, and an OTLP receiver (tether-collect's, locked by its token) that
//! writes every record it receives, flattened, as JSON lines to FILE (for
//! recording fixtures from fake sessions; never point a real session at it).
//! Prints one JSON line `{model, auth, otlp, token}`, then runs until killed.

use std::io::Write;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let records = value("--records").ok_or_else(|| anyhow::anyhow!("--records FILE"))?;
    let target = value("--target").unwrap_or_else(|| "get_current_time".into());
    let arguments = match value("--arguments") {
        Some(json) => serde_json::from_str(&json)?,
        None => serde_json::json!({"timezone": "UTC"}),
    };
    let (model, _) = tether_tests::fake_model::start_model_calling(&target, arguments).await;
    let (auth, _) = tether_tests::fake_model::start_auth().await;
    let (receiver, batches) =
        tether_collect::Receiver::new(tether_collect::ReceiverConfig::default());
    let running = receiver
        .serve("127.0.0.1:0".parse()?)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "{}",
        serde_json::json!({"model": model.base(), "auth": auth.base(),
            "otlp": running.endpoint(), "token": receiver.token().secret()})
    );
    std::io::stdout().flush()?;
    let mut out = std::fs::File::create(records)?;
    tokio::task::spawn_blocking(move || {
        loop {
            let Some(batch) = batches.next(std::time::Duration::from_millis(200)) else {
                continue;
            };
            for record in tether_collect::telemetry_records::records(&batch) {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string(&record).unwrap_or_default()
                );
            }
            let _ = out.flush();
        }
    })
    .await?;
    Ok(())
}
