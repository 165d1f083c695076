//! A listening socket that closes without resetting a connection (`docs/operations.md`,
//! "Stopping and restarting").
//!
//! The kernel completes a client's connection before the server accepts it, and the client sends
//! its request at once; a listening socket closed with such connections still queued resets them
//! (connection reset by peer, after the request was sent). axum closes its listener the moment its
//! graceful shutdown begins, whatever is queued. [`DrainingListener`] instead, once told to close,
//! takes every connection already queued and then closes the socket: a client connecting after
//! that is refused (nothing was sent, so it may safely retry), never reset.
//!
//! A connection taken from that queue has its request in flight or about to be read; shut down
//! before hyper reads it, its unread bytes make the kernel reset it too. [`Activity`] counts the
//! requests under way, so the server shuts its connections down only once the last ones taken
//! were answered and none started for a while ([`Activity::quiet`]).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The listener (see the module).
pub struct DrainingListener {
    inner: Option<TcpListener>,
    /// Once closing: the socket, out of the runtime, accepted from until the kernel's queue is
    /// empty (a runtime listener may not have seen the latest connections yet).
    last: Option<std::net::TcpListener>,
    closing: watch::Receiver<bool>,
    closed: watch::Sender<bool>,
}

/// Tells a [`DrainingListener`] to close, and says when it has.
pub struct Closing {
    closing: watch::Sender<bool>,
    closed: watch::Receiver<bool>,
}

impl DrainingListener {
    /// `listener`, and the handle that closes it.
    pub fn new(listener: TcpListener) -> (Self, Closing) {
        let (closing_tx, closing_rx) = watch::channel(false);
        let (closed_tx, closed_rx) = watch::channel(false);
        (
            Self { inner: Some(listener), last: None, closing: closing_rx, closed: closed_tx },
            Closing { closing: closing_tx, closed: closed_rx },
        )
    }
}

impl Closing {
    /// Closes the listener once it has taken what is queued; waits until it has (at most
    /// `within`: a server that no longer polls its listener never closes it).
    pub async fn close(&mut self, within: std::time::Duration) {
        let _ = self.closing.send(true);
        let _ = tokio::time::timeout(within, self.closed.wait_for(|closed| *closed)).await;
    }
}

impl DrainingListener {
    /// While closing: the next connection the kernel has queued, asked of the socket itself
    /// (the runtime's readiness may lag); none left: the socket is closed and `None`.
    fn take_queued(&mut self) -> Option<(TcpStream, SocketAddr)> {
        if let Some(listener) = self.inner.take() {
            match listener.into_std() {
                Ok(socket) => self.last = Some(socket),
                Err(error) => tracing::warn!(%error, "cannot take the listener out of the runtime: closing it"),
            }
        }
        while let Some(socket) = &self.last {
            match socket.accept() {
                Ok((stream, addr)) => {
                    let stream = stream.set_nonblocking(true).and_then(|()| TcpStream::from_std(stream));
                    match stream {
                        Ok(stream) => return Some((stream, addr)),
                        Err(error) => tracing::warn!(%error, "a queued connection could not be served"),
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    self.last = None;
                    let _ = self.closed.send(true);
                    tracing::info!("listener closed: new connections are refused");
                }
                Err(error) if error.kind() == std::io::ErrorKind::ConnectionAborted => {}
                Err(error) => {
                    tracing::warn!(%error, "accept failed while closing: closing now");
                    self.last = None;
                    let _ = self.closed.send(true);
                }
            }
        }
        None
    }
}

impl axum::serve::Listener for DrainingListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            if *self.closing.borrow() {
                if let Some(connection) = self.take_queued() {
                    return connection;
                }
                // closed: no more connections, ever
                return std::future::pending().await;
            }
            let Some(listener) = &self.inner else { return std::future::pending().await };
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = self.closing.changed() => continue,
            };
            match accepted {
                Ok(connection) => return connection,
                Err(error) => {
                    // as axum's own listener: a failed accept (out of descriptors) is retried
                    tracing::warn!(%error, "accept failed; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match (&self.inner, &self.last) {
            (Some(listener), _) => listener.local_addr(),
            (None, Some(socket)) => socket.local_addr(),
            (None, None) => Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the listener is closed")),
        }
    }
}

/// The requests a server has under way, and when the last one started (see the module).
pub struct Activity {
    under_way: AtomicUsize,
    last_start_ms: AtomicU64,
    epoch: Instant,
}

impl Activity {
    /// No request yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self { under_way: AtomicUsize::new(0), last_start_ms: AtomicU64::new(0), epoch: Instant::now() })
    }

    /// Waits until no request is under way and none started for `quiet` (at most `within`).
    pub async fn quiet(&self, quiet: Duration, within: Duration) {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            let since_start =
                self.epoch.elapsed().saturating_sub(Duration::from_millis(self.last_start_ms.load(Ordering::SeqCst)));
            if self.under_way.load(Ordering::SeqCst) == 0 && since_start >= quiet {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The middleware that keeps an [`Activity`].
pub async fn track(
    axum::extract::State(activity): axum::extract::State<Arc<Activity>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    activity.under_way.fetch_add(1, Ordering::SeqCst);
    activity.last_start_ms.store(activity.epoch.elapsed().as_millis() as u64, Ordering::SeqCst);
    let response = next.run(request).await;
    activity.under_way.fetch_sub(1, Ordering::SeqCst);
    response
}
