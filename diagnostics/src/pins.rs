//! Tool definition pins, as a step after an endpoint check: the listing's
//! hashes (`check_endpoint_hashing`) compared with the pins a store keeps
//! for the server (`tether_core::pins::sight`), and the server's rows
//! written back. The first sighting pins; a later one reports what
//! changed; only `tether pins accept` moves a pin.
//!
//! Hashes only reach the store: the definitions' text was hashed in the
//! check and dropped there.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tether_core::inventory::InventoryDocument;
use tether_core::model::EndpointTestResult;
use tether_core::pins::{PinReport, server_key, sight};
use tether_core::store::{Store, StoreError};
use tether_inventory::endpoint_test::{RulesOf, TestProgress, test_rows};
use tokio_util::sync::CancellationToken;

use crate::endpoint_check::{CheckLimits, ListedHashes, check_endpoint_hashing};

/// The server's identity for `result` (`NAME@TARGET`), once it answered
/// with its serverInfo.
pub fn server_of(result: &EndpointTestResult) -> Option<String> {
    let name = result.server_name.as_deref()?;
    Some(server_key(name, &result.target))
}

/// Compares one successful check's listing with the server's pins in
/// `store` and writes the server's rows back (the first sighting pins
/// every tool). `Ok(None)` when there is nothing to compare: the check
/// failed, or the server gave no serverInfo.
pub fn compare_and_pin(
    store: &dyn Store,
    result: &EndpointTestResult,
    listed: &ListedHashes,
) -> Result<Option<PinReport>, StoreError> {
    if !result.succeeded {
        return Ok(None);
    }
    let Some(server) = server_of(result) else {
        return Ok(None);
    };
    let stored = store.tool_pins(Some(&server))?;
    let (rows, report) = sight(&stored, &server, listed, tether_hub::now());
    store.replace_tool_pins(&server, &rows)?;
    tracing::debug!(
        %server,
        first = report.first_sighting,
        changes = report.changes.len(),
        "tool pins compared"
    );
    Ok(Some(report))
}

/// One check's listing, kept for pinning after an inventory's checks.
#[derive(Debug, Clone)]
pub struct Sighting {
    /// The check's result (its target and serverInfo name the server).
    pub result: EndpointTestResult,
    /// The listing's hashes.
    pub listed: ListedHashes,
}

/// [`crate::inventory::check_inventory`], keeping every successful
/// check's listing hashes for [`compare_and_pin`]. Returns whether any
/// check failed, and the sightings (one per check that listed tools).
pub async fn check_inventory_hashing(
    document: &mut InventoryDocument,
    project: Option<&Path>,
    limits: CheckLimits,
    concurrency: usize,
    progress: Option<tokio::sync::watch::Sender<TestProgress>>,
    rules_of: RulesOf<'_>,
    cancel: CancellationToken,
) -> (bool, Vec<Sighting>) {
    let seen: Arc<Mutex<Vec<Sighting>>> = Arc::default();
    let failed = test_rows(
        document,
        project,
        concurrency,
        progress,
        rules_of,
        |endpoint| {
            let cancel = cancel.clone();
            let seen = Arc::clone(&seen);
            async move {
                let (result, catalog, listed) =
                    check_endpoint_hashing(&endpoint, limits, None, cancel).await;
                if let Some(listed) = listed {
                    seen.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(Sighting {
                            result: result.clone(),
                            listed,
                        });
                }
                (result, catalog)
            }
        },
    )
    .await;
    let sightings = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    (failed, sightings)
}
