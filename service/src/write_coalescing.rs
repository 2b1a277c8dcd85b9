//! Every accepted connection's writes, gathered: what HTTP/2 writes while other tasks are still
//! queued to write to the same connection goes out in one `write` instead of one each.
//!
//! Why: hyper drives each connection from one task and each stream from another. When a game's
//! record is durable, its actor wakes the `Act` caller's stream and every watcher's stream; each
//! of them hands its frame to the connection and wakes the connection's task, which tokio runs
//! next (its LIFO slot), so the connection wrote each frame in a `writev` of its own: a game
//! watched by its four seats and a spectator made five or six system calls per action on one
//! connection, and as many reads on the other side. Here a flush with bytes waiting first yields
//! once (it wakes its own task, which tokio schedules behind the tasks already queued); the
//! streams queued behind it add their frames, and the second flush writes them all together.
//!
//! What it costs: a connection's task is polled once more per flush; a lone write waits for the
//! tasks already queued on its worker (never for I/O, never for a timer). What it holds: at most
//! `MAX_GATHERED` bytes per connection, and its buffer is shrunk back to `KEPT_CAPACITY` after a
//! larger burst, so an idle connection keeps at most that.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tonic::transport::server::Connected;

/// A connection's gathered bytes beyond which a write goes out before more is taken.
const MAX_GATHERED: usize = 64 * 1024;

/// The buffer capacity a connection keeps between flushes.
const KEPT_CAPACITY: usize = 4 * 1024;

/// An accepted connection whose writes are gathered until the next flush.
pub struct Coalescing<IO> {
    inner: IO,
    gathered: Vec<u8>,
    /// How much of `gathered` is already written (a partial write).
    written: usize,
    /// The flush already yielded once for the bytes now gathered.
    yielded: bool,
}

impl<IO> Coalescing<IO> {
    pub fn new(inner: IO) -> Self {
        Coalescing {
            inner,
            gathered: Vec::new(),
            written: 0,
            yielded: false,
        }
    }
}

impl<IO: AsyncWrite + Unpin> Coalescing<IO> {
    /// Writes out everything gathered.
    fn poll_write_gathered(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.gathered.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.gathered[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.written = 0;
        self.yielded = false;
        self.gathered.clear();
        // Shrunk, not freed: a busy connection would grow a fresh buffer step by step again.
        self.gathered.shrink_to(KEPT_CAPACITY);
        Poll::Ready(Ok(()))
    }

    /// Makes room for `len` more bytes: writes out what is gathered if they would not fit.
    /// Ready(true): gather them; Ready(false): too large to gather, write them through.
    fn poll_room_for(&mut self, cx: &mut Context<'_>, len: usize) -> Poll<io::Result<bool>> {
        if self.gathered.len() + len > MAX_GATHERED {
            ready!(self.poll_write_gathered(cx))?;
        }
        Poll::Ready(Ok(len <= MAX_GATHERED))
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Coalescing<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if !ready!(this.poll_room_for(cx, buf.len()))? {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        this.gathered.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        if !ready!(this.poll_room_for(cx, len))? {
            return Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        }
        for buf in bufs {
            this.gathered.extend_from_slice(buf);
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.gathered.is_empty() {
            return Pin::new(&mut this.inner).poll_flush(cx);
        }
        if !this.yielded {
            // Behind the tasks already queued: those about to write to this connection too.
            this.yielded = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(this.poll_write_gathered(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_write_gathered(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Coalescing<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<IO: Connected> Connected for Coalescing<IO> {
    type ConnectInfo = IO::ConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Wake, Waker};

    /// A socket that records each write call and takes at most `per_call` bytes of it.
    #[derive(Default)]
    struct Recording {
        writes: Vec<Vec<u8>>,
        per_call: Option<usize>,
        shut: bool,
    }

    impl AsyncWrite for Recording {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let n = self.per_call.map_or(buf.len(), |max| buf.len().min(max));
            self.writes.push(buf[..n].to_vec());
            Poll::Ready(Ok(n))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            self.shut = true;
            Poll::Ready(Ok(()))
        }
    }

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A context whose wakes go nowhere.
    fn quiet() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    fn write(io: &mut Coalescing<Recording>, cx: &mut Context<'_>, bytes: &[u8]) {
        let written = Pin::new(io).poll_write(cx, bytes);
        assert!(matches!(written, Poll::Ready(Ok(n)) if n == bytes.len()));
    }

    /// A flush with bytes gathered: pending once (its yield), then done.
    fn flush_after_its_yield(io: &mut Coalescing<Recording>, cx: &mut Context<'_>) {
        assert!(Pin::new(&mut *io).poll_flush(cx).is_pending());
        assert!(Pin::new(io).poll_flush(cx).is_ready());
    }

    #[test]
    fn writes_until_a_flush_go_out_together_after_one_yield() {
        let wakes = Arc::new(CountingWaker::default());
        let waker = Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut io = Coalescing::new(Recording::default());
        write(&mut io, &mut cx, b"first frame;");
        let slices = [io::IoSlice::new(b"second "), io::IoSlice::new(b"frame;")];
        assert!(matches!(
            Pin::new(&mut io).poll_write_vectored(&mut cx, &slices),
            Poll::Ready(Ok(13))
        ));
        assert!(io.inner.writes.is_empty(), "nothing written before a flush");

        // The first flush yields: it wakes its task and writes nothing yet.
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_pending());
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert!(io.inner.writes.is_empty());
        // What another stream writes meanwhile joins them.
        write(&mut io, &mut cx, b"third");
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(
            io.inner.writes,
            vec![b"first frame;second frame;third".to_vec()]
        );

        // Nothing gathered: a flush is the socket's, at once.
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(wakes.0.load(Ordering::Relaxed), 1);
        assert_eq!(io.inner.writes.len(), 1);
    }

    #[test]
    fn partial_writes_keep_the_order_and_every_byte() {
        let mut cx = quiet();
        let mut io = Coalescing::new(Recording {
            per_call: Some(7),
            ..Default::default()
        });
        let message: Vec<u8> = (0..100u8).collect();
        write(&mut io, &mut cx, &message[..40]);
        write(&mut io, &mut cx, &message[40..]);
        flush_after_its_yield(&mut io, &mut cx);
        assert_eq!(io.inner.writes.concat(), message);
        assert_eq!(io.inner.writes.len(), 100usize.div_ceil(7));
    }

    #[test]
    fn a_large_write_goes_through_after_what_was_gathered() {
        let mut cx = quiet();
        let mut io = Coalescing::new(Recording::default());
        write(&mut io, &mut cx, b"small");
        let large = vec![7u8; MAX_GATHERED + 1];
        write(&mut io, &mut cx, &large);
        assert_eq!(io.inner.writes, vec![b"small".to_vec(), large]);
        assert!(io.gathered.is_empty());
        // The buffer of a burst is shrunk back: an idle connection keeps little.
        write(&mut io, &mut cx, &vec![1u8; MAX_GATHERED - 1]);
        flush_after_its_yield(&mut io, &mut cx);
        assert!(io.gathered.capacity() <= KEPT_CAPACITY);
    }

    #[test]
    fn shutdown_writes_what_was_gathered_first() {
        let mut cx = quiet();
        let mut io = Coalescing::new(Recording::default());
        write(&mut io, &mut cx, b"goodbye");
        assert!(Pin::new(&mut io).poll_shutdown(&mut cx).is_ready());
        assert_eq!(io.inner.writes, vec![b"goodbye".to_vec()]);
        assert!(io.inner.shut);
    }
}
