//! An rmcp transport over a pair of bounded channels, used by the legacy SSE
//! transport on both sides.

use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

/// The other side has gone.
#[derive(Debug, thiserror::Error)]
#[error("the peer closed the channel")]
pub struct ChannelClosed;

/// Messages out through `tx`, messages in from `rx`.
pub struct ChannelTransport<R: ServiceRole> {
    tx: mpsc::Sender<TxJsonRpcMessage<R>>,
    rx: mpsc::Receiver<RxJsonRpcMessage<R>>,
}

impl<R: ServiceRole> ChannelTransport<R> {
    /// A transport over the two channel ends.
    pub fn new(
        tx: mpsc::Sender<TxJsonRpcMessage<R>>,
        rx: mpsc::Receiver<RxJsonRpcMessage<R>>,
    ) -> Self {
        ChannelTransport { tx, rx }
    }
}

impl<R: ServiceRole> Transport<R> for ChannelTransport<R> {
    type Error = ChannelClosed;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let tx = self.tx.clone();
        async move { tx.send(item).await.map_err(|_| ChannelClosed) }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<R>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rx.close();
        Ok(())
    }
}
