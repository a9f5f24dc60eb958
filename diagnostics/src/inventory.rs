//! Endpoint checks over an inventory (`tether inventory --test`): the rows
//! [`tether_inventory::endpoint_test`] picks, each checked with
//! [`check_endpoint_catalog`] (so each row learns what its tools cost).

use std::path::Path;

use tether_core::inventory::InventoryDocument;
use tether_inventory::endpoint_test::{RulesOf, TestProgress, test_rows};
use tokio_util::sync::CancellationToken;

use crate::endpoint_check::{CheckLimits, check_endpoint_catalog};

/// Checks every enabled row whose command resolves (a stdio server without a
/// `cwd` runs in `project`), at most `concurrency` at once, and fills each
/// row's endpoint-tested stages, and each listed tool's last mile as its
/// harness's rules (`rules_of`) predict it. `progress` hears of every start
/// and finish; `cancel` stops the checks still running (they end as
/// `cancelled`). Returns whether any check failed.
pub async fn check_inventory(
    document: &mut InventoryDocument,
    project: Option<&Path>,
    limits: CheckLimits,
    concurrency: usize,
    progress: Option<tokio::sync::watch::Sender<TestProgress>>,
    rules_of: RulesOf<'_>,
    cancel: CancellationToken,
) -> bool {
    test_rows(
        document,
        project,
        concurrency,
        progress,
        rules_of,
        |endpoint| {
            let cancel = cancel.clone();
            async move { check_endpoint_catalog(&endpoint, limits, cancel).await }
        },
    )
    .await
}
