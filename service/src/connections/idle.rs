//! Idle connections: what each connection is doing (its calls and streams open, and since
//! when it has had none), counted by a tower layer on every call and by the body of every
//! stream, and the connection wrapper ([`Admitted`]) that closes it once idle for
//! `--idle-connection-timeout` (an HTTP/2 GOAWAY first on the gRPC port).

use super::*;

/// Milliseconds since the first call: the clock of [`ConnectionState::idle_since`].
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// What a connection is doing: its calls and streams open, and since when it has had none.
#[derive(Default)]
pub struct ConnectionState {
    busy: AtomicUsize,
    idle_since_ms: AtomicU64,
}

impl ConnectionState {
    fn new() -> Arc<ConnectionState> {
        let state = ConnectionState::default();
        state.idle_since_ms.store(now_ms(), Ordering::Relaxed);
        Arc::new(state)
    }

    /// A call or stream opened on the connection; it counts until the guard is dropped.
    pub fn busy(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }
}

/// A call or stream open on a connection ([`ConnectionState::busy`]).
pub struct Busy(Arc<ConnectionState>);

impl Drop for Busy {
    fn drop(&mut self) {
        // The idle clock starts when the last one ends.
        self.0.idle_since_ms.store(now_ms(), Ordering::Relaxed);
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The gRPC port's connections by peer address: tonic gives a request its connection's peer
/// address, not the connection, so the layer that counts calls ([`CountCalls`]) finds the
/// connection's state here.
#[derive(Clone, Default)]
pub struct Activity {
    by_peer: Arc<Mutex<HashMap<SocketAddr, Arc<ConnectionState>>>>,
}

impl Activity {
    pub(super) fn register(&self, peer: SocketAddr) -> Arc<ConnectionState> {
        let state = ConnectionState::new();
        self.by_peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(peer, state.clone());
        state
    }

    fn forget(&self, peer: SocketAddr) {
        self.by_peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&peer);
    }

    fn of(&self, peer: SocketAddr) -> Option<Arc<ConnectionState>> {
        self.by_peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&peer)
            .cloned()
    }

    /// The tower layer that marks a gRPC connection busy for as long as each call's response
    /// (a stream's included) lives.
    pub fn layer(&self) -> CountCallsLayer {
        CountCallsLayer {
            activity: self.clone(),
        }
    }
}

/// See [`Activity::layer`].
#[derive(Clone)]
pub struct CountCallsLayer {
    activity: Activity,
}

impl<S> tower::Layer<S> for CountCallsLayer {
    type Service = CountCalls<S>;

    fn layer(&self, inner: S) -> CountCalls<S> {
        CountCalls {
            inner,
            activity: self.activity.clone(),
        }
    }
}

/// See [`Activity::layer`].
#[derive(Clone)]
pub struct CountCalls<S> {
    inner: S,
    activity: Activity,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, B> tower::Service<http::Request<B>> for CountCalls<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>> + 'static,
    S::Future: Send + 'static,
    B: 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let peer = peer_of(request.extensions());
        let busy = peer
            .and_then(|peer| self.activity.of(peer))
            .map(|state| state.busy());
        let call = self.inner.call(request);
        Box::pin(async move {
            let response = call.await?;
            Ok(match busy {
                None => response,
                Some(busy) => response.map(|body| tonic::body::Body::new(Counted { body, busy })),
            })
        })
    }
}

/// A request's peer address, as tonic puts it in the extensions (TCP, or TLS over TCP).
fn peer_of(extensions: &http::Extensions) -> Option<SocketAddr> {
    use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
    extensions
        .get::<TcpConnectInfo>()
        .and_then(|info| info.remote_addr())
        .or_else(|| {
            extensions
                .get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|info| info.get_ref().remote_addr())
        })
}

/// A response body that keeps its connection counted busy until it is done or dropped.
pub struct Counted<B> {
    body: B,
    busy: Busy,
}

impl<B> Counted<B> {
    pub fn new(body: B, busy: Busy) -> Counted<B> {
        Counted { body, busy }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Counted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let _ = &self.busy;
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// An admitted connection: counted against its port's gate while it lives, and closed once
/// idle for the timeout.
pub struct Admitted<IO> {
    inner: IO,
    ticket: Ticket,
    state: Arc<ConnectionState>,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// Say GOAWAY before closing an idle HTTP/2 connection (not under TLS: these are the
    /// encrypted bytes).
    goaway: bool,
    /// The first bytes were HTTP/2's preface (None: nothing read yet).
    http2: Option<bool>,
    /// Nothing written since the last completed flush: the stream is between frames, where a
    /// GOAWAY may go.
    between_frames: bool,
    closing: Closing,
    activity: Option<Activity>,
    peer: SocketAddr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closing {
    No,
    /// The GOAWAY is written; flushing it.
    Flushing,
    /// Flushed (or nothing to say): sending FIN, then reads end.
    ShuttingDown,
    Closed,
}

impl<IO> Admitted<IO> {
    pub fn new(
        inner: IO,
        ticket: Ticket,
        state: Arc<ConnectionState>,
        idle: Duration,
        goaway: bool,
        activity: Option<Activity>,
        peer: SocketAddr,
    ) -> Self {
        Admitted {
            inner,
            ticket,
            state,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
            goaway,
            http2: None,
            between_frames: true,
            closing: Closing::No,
            activity,
            peer,
        }
    }

    /// A fresh state for a connection the caller counts itself (the viewer's).
    pub fn state() -> Arc<ConnectionState> {
        ConnectionState::new()
    }

    /// Whether the connection has had no call for the timeout; if not, the timer is set for
    /// the next moment it could have.
    fn idle_for_long(&mut self, cx: &mut Context<'_>) -> bool {
        if self.deadline.as_mut().poll(cx).is_pending() {
            return false;
        }
        let now = tokio::time::Instant::now();
        if self.state.busy.load(Ordering::Acquire) > 0 {
            self.deadline.as_mut().reset(now + self.idle);
        } else {
            let idle_for =
                Duration::from_millis(now_ms() - self.state.idle_since_ms.load(Ordering::Relaxed));
            if idle_for >= self.idle {
                return true;
            }
            self.deadline.as_mut().reset(now + (self.idle - idle_for));
        }
        // Registers the waker for the new deadline.
        let _ = self.deadline.as_mut().poll(cx);
        false
    }
}

impl<IO> Drop for Admitted<IO> {
    fn drop(&mut self) {
        if let Some(activity) = &self.activity {
            activity.forget(self.peer);
        }
    }
}

use std::future::Future as _;

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for Admitted<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            match this.closing {
                Closing::No => {
                    if !this.idle_for_long(cx) {
                        break;
                    }
                    crate::metrics::idle_closed(this.ticket.gate.port.unwrap_or("grpc"));
                    if this.goaway && this.http2 == Some(true) && this.between_frames {
                        // No stream open: 2^31-1 says none was cut short.
                        let frame = goaway(
                            0x7fff_ffff,
                            NO_ERROR,
                            "idle for --idle-connection-timeout",
                            false,
                        );
                        match Pin::new(&mut this.inner).poll_write(cx, &frame) {
                            Poll::Ready(Ok(n)) if n == frame.len() => {
                                this.closing = Closing::Flushing
                            }
                            _ => this.closing = Closing::ShuttingDown,
                        }
                    } else {
                        this.closing = Closing::ShuttingDown;
                    }
                }
                Closing::Flushing => {
                    let _ = ready!(Pin::new(&mut this.inner).poll_flush(cx));
                    this.closing = Closing::ShuttingDown;
                }
                Closing::ShuttingDown => {
                    let _ = ready!(Pin::new(&mut this.inner).poll_shutdown(cx));
                    this.closing = Closing::Closed;
                }
                // The end of the stream: the HTTP server closes the connection.
                Closing::Closed => return Poll::Ready(Ok(())),
            }
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if this.http2.is_none() && buf.filled().len() > before {
            this.http2 = Some(buf.filled()[before..].starts_with(b"PRI"));
        }
        Poll::Ready(Ok(()))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Admitted<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.between_frames = false;
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.between_frames = false;
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(Pin::new(&mut self.inner).poll_flush(cx))?;
        self.between_frames = true;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

impl<IO: tonic::transport::server::Connected> tonic::transport::server::Connected for Admitted<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}
