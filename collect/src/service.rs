//! Everything `tether collect` runs, for a host to run the same: the
//! receiver on its socket (with a kept token, or a new one), the optional
//! forward to the user's own collector, and the [`Collector`] fed on a
//! thread of its own, landing sessions in the host's hub.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use tether_core::spec::ServerSpec;
use tether_core::telemetry::TelemetryTarget;
use tether_guard::Token;

use crate::collector::{Collector, CollectorStats};
use crate::forward::{ForwardError, ForwardTarget, Forwarder};
use crate::pump::{CollectorThread, ServiceTally};
use crate::{Receiver, ReceiverConfig, RunningReceiver};

/// What a collect service is started with.
#[derive(Debug)]
pub struct CollectConfig {
    /// Where to listen (`127.0.0.1:4318`; port 0 for any).
    pub addr: SocketAddr,
    /// The token to admit (a kept one); `None`: a new one from the OS RNG.
    pub token: Option<Token>,
    /// Where to forward every admitted request, unchanged.
    pub forward: Option<ForwardTarget>,
    /// The receiver's caps.
    pub receiver: ReceiverConfig,
}

impl CollectConfig {
    /// Listening on `addr`, with a new token, no forward, default caps.
    pub fn new(addr: SocketAddr) -> Self {
        CollectConfig {
            addr,
            token: None,
            forward: None,
            receiver: ReceiverConfig::default(),
        }
    }
}

/// Why a collect service did not start.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// The socket could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The forward target was refused.
    #[error(transparent)]
    Forward(#[from] ForwardError),
}

/// A running collect service: stop it with [`stop`](Self::stop).
#[derive(Debug)]
pub struct RunningCollect {
    receiver: Receiver,
    running: RunningReceiver,
    pump: CollectorThread,
}

impl RunningCollect {
    /// Binds, starts the forward (refused when it names this receiver),
    /// and feeds what arrives to a [`Collector`] over `hub`, with
    /// `configured` as each harness's servers today.
    pub async fn start(
        config: CollectConfig,
        hub: Arc<tether_hub::Hub>,
        configured: HashMap<String, Vec<ServerSpec>>,
    ) -> Result<Self, CollectError> {
        let (receiver, batches) = match config.token {
            Some(token) => Receiver::with_token(config.receiver, token),
            None => Receiver::new(config.receiver),
        };
        let running = receiver
            .serve(config.addr)
            .await
            .map_err(|source| CollectError::Listen {
                addr: config.addr,
                source,
            })?;
        if let Some(target) = config.forward {
            match Forwarder::start(target, Some(running.addr())) {
                Ok(forwarder) => {
                    receiver.set_forward(forwarder);
                }
                Err(err) => {
                    running.shutdown().await;
                    return Err(err.into());
                }
            }
        }
        let pump = CollectorThread::spawn(Collector::new(hub, configured), batches);
        Ok(RunningCollect {
            receiver,
            running,
            pump,
        })
    }

    /// The receiver (its token, its stats).
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr()
    }

    /// Where a harness sends its telemetry, and the `Authorization` it sends.
    pub fn target(&self) -> TelemetryTarget {
        TelemetryTarget {
            endpoint: self.running.endpoint(),
            authorization: self.receiver.token().bearer(),
        }
    }

    /// Stops listening, lets the collector read what was queued, and hands
    /// back the receiver (its final stats) and what the collector read (the
    /// hub is the host's to flush).
    pub async fn stop(self) -> (Receiver, CollectorStats, ServiceTally) {
        self.running.shutdown().await;
        let (read, tally) = self.pump.stop();
        (self.receiver, read, tally)
    }
}
